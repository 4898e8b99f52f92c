/** The `minicap` command line (the native binary and the apk's Main take the same options). */
import { type ProgramContext } from './device-programs';
import { parseProjection, projectedJpeg, startMinicapServer } from './minicap';

const USAGE = `Usage: minicap [-h] [-n <name>]
  -d <id>:       Display ID. (0)
  -n <name>:     Change the name of the abtract unix domain socket. (minicap)
  -P <value>:    Display projection (<w>x<h>@<w>x<h>/{0|90|180|270}).
  -Q <value>:    JPEG quality (0-100).
  -s:            Take a screenshot and output it to stdout. Needs -P.
  -S:            Skip frames when they cannot be consumed quickly enough.
  -r <value>:    Frame rate (frames/sec).
  -t:            Attempt to get the capture method running, then exit.
  -i:            Get display information in JSON format. May segfault.
  -h:            Show help.
`;

export async function runMinicap(ctx: ProgramContext, args: string[]): Promise<number> {
  const { screen, io } = ctx;
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (/^-[dnPQr]$/.test(a)) values.set(a[1], args[++i] ?? '');
    else if (/^-[sSthi]$/.test(a)) flags.add(a[1]);
    else {
      io.err(USAGE);
      return 1;
    }
  }
  if (flags.has('h')) {
    io.err(USAGE);
    return 0;
  }
  const dp = ctx.spec.screen.density / 160;
  if (flags.has('i')) {
    const inches = Math.hypot(screen.width, screen.height) / ctx.spec.screen.density;
    io.out(JSON.stringify({ id: 0, width: screen.width, height: screen.height, xdpi: ctx.spec.screen.density, ydpi: ctx.spec.screen.density, size: Number(inches.toFixed(2)), density: dp, fps: 60, secure: true, rotation: screen.rotation * 90 }, null, 4) + '\n');
    return 0;
  }
  if (flags.has('t')) {
    io.out('OK\n');
    return 0;
  }
  const projection = parseProjection(values.get('P'), screen);
  if (!projection) {
    io.err(`ERROR: Incorrect projection ${values.get('P') ?? ''}\n${USAGE}`);
    return 1;
  }
  const quality = Math.max(1, Math.min(100, Number(values.get('Q') ?? 80) || 80));
  if (flags.has('s')) {
    io.out(projectedJpeg(screen, projection, quality));
    return 0;
  }
  const socketName = values.get('n') || 'minicap';
  io.err(`PID: ${ctx.pid}\nINFO: Using projection ${projection.realWidth}x${projection.realHeight}@${projection.virtualWidth}x${projection.virtualHeight}/${projection.orientation * 90}\n`);
  let server: { close(): void };
  try {
    server = startMinicapServer(screen, ctx.sockets, { pid: ctx.pid, projection, quality, fps: Number(values.get('r') ?? 30) || 30, socketName });
  } catch {
    io.err(`ERROR: Unable to start server on namespace '${socketName}'\n`);
    return 1;
  }
  io.err('INFO: Server start\n');
  await ctx.killed;
  server.close();
  return 0;
}
