/** The `minitouch` command line. */
import { type ProgramContext } from './device-programs';
import { TOUCH_MAX_X, TOUCH_MAX_Y, startMinitouchServer } from './minitouch';

const USAGE = `Usage: minitouch [-h] [-d <device>] [-n <name>] [-v] [-i] [-f <file>]
  -d <device>: Use the given touch device. Otherwise autodetect.
  -n <name>:   Change the name of of the abtract unix domain socket. (minitouch)
  -v:          Verbose output.
  -i:          Uses STDIN and doesn't start socket.
  -f <file>:   Runs a file with a list of commands, doesn't start socket.
  -h:          Show help.
`;

export async function runMinitouch(ctx: ProgramContext, args: string[]): Promise<number> {
  const { io } = ctx;
  let socketName = 'minitouch';
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-n') socketName = args[++i] ?? '';
    else if (a === '-d') i++;
    else if (a === '-v') continue;
    else if (a === '-h') {
      io.err(USAGE);
      return 0;
    } else {
      io.err(USAGE);
      return 1;
    }
  }
  io.err(`Type B touch device touch_dev (${TOUCH_MAX_X}x${TOUCH_MAX_Y} with 10 contacts) detected on /dev/input/event2 (score 22110)\n`);
  let server: { close(): void };
  try {
    server = startMinitouchServer(ctx.screen, ctx.sockets, ctx.pid, socketName);
  } catch {
    io.err(`Unable to start server on ${socketName}\n`);
    return 1;
  }
  await ctx.killed;
  server.close();
  return 0;
}
