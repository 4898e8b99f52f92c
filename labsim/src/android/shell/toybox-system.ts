/** toybox's commands about the device itself: who the shell is, its kernel, its processes, its clock. */
import { CommandContext, CommandFn } from './interpreter';
import { options } from './toybox-files';
import { backtracks } from './toybox-text';

/** One process as `ps` shows it. */
export interface DeviceProcess {
  user: string;
  pid: number;
  ppid: number;
  vsz: number;
  rss: number;
  wchan: string;
  state: string;
  name: string;
}

/** What the system commands read from the simulated device. */
export interface DeviceSystem {
  kernel: { release: string; version: string; machine: string };
  hostname: string;
  /** Every process on the device, apps included, besides the shell's own. */
  processes(): DeviceProcess[];
  /** The device's wall clock zone (`date`). */
  timezone: string;
  /** Ends a process the shell user started (a program run from the shell); false when it may not or does not exist. */
  kill?(pid: number): boolean;
}

/** The shell user of a production build: uid 2000 with the groups adbd gives it. */
const SHELL_ID = 'uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),1028(sdcard_r),1078(ext_data_rw),1079(ext_obb_rw),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats),3009(readproc),3011(uhid),3012(readtracefs) context=u:r:shell:s0';
const SHELL_PID = 4242;

/** The start of toybox's `ps --help` (clients read it to learn whether -A exists). */
const PS_HELP = `usage: ps [-AadefLlnwZ] [-gG GROUP,] [-k FIELD,] [-o FIELD,] [-p PID,] [-t TTY,] [-uU USER,]

List processes.

Which processes to show (-gGuUpPt selections may be comma separated lists):

-A  All					-a  Has terminal not session leader
-d  All but session leaders		-e  Synonym for -A
-g  In GROUPs				-G  In real GROUPs (before sgid)
-p  PIDs (--pid)			-P  Parent PIDs (--ppid)
-s  In session IDs			-t  Attached to selected TTYs
-T  Show threads also			-u  Owned by selected USERs
-U  Real USERs (before suid)

Output modifiers:

-k  Sort FIELDs (-FIELD to reverse)	-M  Measure/pad future field widths
-n  Show numeric USER and GROUP		-w  Wide output (don't truncate fields)
`;

/** The processes of this shell session: the shell and the `ps` now running. */
function ownProcesses(): DeviceProcess[] {
  return [
    { user: 'shell', pid: SHELL_PID, ppid: 1023, vsz: 10_829_864, rss: 3_124, wchan: '__do_sys_rt_sigsuspend', state: 'S', name: 'sh' },
    { user: 'shell', pid: SHELL_PID + 7, ppid: SHELL_PID, vsz: 10_846_248, rss: 3_880, wchan: '0', state: 'R', name: 'ps' },
  ];
}

export function systemCommands(system: DeviceSystem): Record<string, CommandFn> {
  const ps: CommandFn = (ctx) => {
    if (ctx.args.includes('--help')) {
      ctx.io.stdout.write(PS_HELP);
      return 0;
    }
    const { flags, values, operands } = options(ctx.args, 'opk');
    const all = [...system.processes(), ...ownProcesses()];
    let shown = flags.has('A') || flags.has('e') ? all : ownProcesses();
    const pids = values.get('p')?.split(',').map(Number);
    if (pids) shown = all.filter((p) => pids.includes(p.pid));
    const names = operands.filter((o) => !/^\d+$/.test(o));
    if (names.length > 0) shown = all.filter((p) => names.includes(p.name));
    const columns: Record<string, { header: string; width: number; value: (p: DeviceProcess) => string; left?: boolean }> = {
      USER: { header: 'USER', width: -10, value: (p) => p.user, left: true },
      PID: { header: 'PID', width: 5, value: (p) => String(p.pid) },
      PPID: { header: 'PPID', width: 5, value: (p) => String(p.ppid) },
      VSZ: { header: 'VSZ', width: 7, value: (p) => String(p.vsz) },
      RSS: { header: 'RSS', width: 6, value: (p) => String(p.rss) },
      WCHAN: { header: 'WCHAN', width: -16, value: (p) => p.wchan.slice(0, 16), left: true },
      ADDR: { header: 'ADDR', width: 4, value: () => '0' },
      S: { header: 'S', width: 1, value: (p) => p.state, left: true },
      NAME: { header: 'NAME', width: 0, value: (p) => p.name, left: true },
      CMD: { header: 'CMD', width: 0, value: (p) => p.name, left: true },
      ARGS: { header: 'ARGS', width: 0, value: (p) => p.name, left: true },
    };
    const chosen = (values.get('o')?.split(',').map((c) => c.toUpperCase().replace(/=.*/, '')) ?? ['USER', 'PID', 'PPID', 'VSZ', 'RSS', 'WCHAN', 'ADDR', 'S', 'NAME']).filter((c) => columns[c]);
    const row = (cells: string[]) => cells.map((cell, i) => {
      const c = columns[chosen[i]];
      const width = Math.abs(c.width);
      return i === cells.length - 1 && c.left ? cell : c.left ? cell.padEnd(width) : cell.padStart(width);
    }).join(' ');
    const out = [row(chosen.map((c) => columns[c].header)), ...shown.map((p) => row(chosen.map((c) => columns[c].value(p))))];
    ctx.io.stdout.write(out.join('\n') + '\n');
    return names.length > 0 && shown.length === 0 ? 1 : 0;
  };

  const pidof: CommandFn = (ctx) => {
    const { flags, operands } = options(ctx.args);
    const pids = [...system.processes(), ...ownProcesses()].filter((p) => operands.includes(p.name)).map((p) => p.pid).sort((a, b) => b - a);
    if (pids.length === 0) return 1;
    ctx.io.stdout.write((flags.has('s') ? pids.slice(0, 1) : pids).join(' ') + '\n');
    return 0;
  };

  const pgrep: CommandFn = (ctx) => {
    const { flags, operands } = options(ctx.args);
    let pattern: RegExp;
    try {
      if (backtracks(operands[0] ?? '')) throw new Error('pattern too complex');
      pattern = new RegExp(flags.has('x') ? `^(?:${operands[0] ?? ''})$` : operands[0] ?? '');
    } catch {
      ctx.io.stderr.write(`pgrep: bad regex '${operands[0]}'\n`);
      return 2;
    }
    const found = [...system.processes(), ...ownProcesses()].filter((p) => pattern.test(p.name));
    ctx.io.stdout.write(found.map((p) => (flags.has('l') ? `${p.pid} ${p.name}\n` : `${p.pid}\n`)).join(''));
    return found.length > 0 ? 0 : 1;
  };

  const kill: CommandFn = (ctx) => {
    const { operands } = options(ctx.args, 's');
    let status = 0;
    for (const pid of operands) {
      if (/^\d+$/.test(pid) && system.kill?.(Number(pid))) continue;
      const process = system.processes().find((p) => String(p.pid) === pid);
      ctx.io.stderr.write(`kill: ${pid}: ${process ? 'Operation not permitted' : 'No such process'}\n`);
      status = 1;
    }
    return status;
  };

  const pkill: CommandFn = (ctx) => {
    const { flags, operands } = options(ctx.args.filter((a) => !/^-(\d+|[A-Z]+)$/.test(a)));
    const [patternText = ''] = operands;
    let pattern: RegExp;
    try {
      if (backtracks(patternText)) throw new Error('pattern too complex');
      pattern = new RegExp(flags.has('x') ? `^(?:${patternText})$` : patternText);
    } catch {
      ctx.io.stderr.write(`pkill: bad regex '${patternText}'\n`);
      return 2;
    }
    const matched = system.processes().filter((p) => pattern.test(p.name));
    let killed = 0;
    for (const p of matched) if (system.kill?.(p.pid)) killed++;
    return killed > 0 ? 0 : 1;
  };

  const uname: CommandFn = (ctx) => {
    const { flags } = options(ctx.args);
    const k = system.kernel;
    const fields: Array<[string, string]> = [['s', 'Linux'], ['n', system.hostname], ['r', k.release], ['v', k.version], ['m', k.machine], ['o', 'Toybox']];
    const picked = flags.has('a') ? fields.slice(0, 5) : fields.filter(([f]) => flags.has(f));
    ctx.io.stdout.write((picked.length > 0 ? picked : fields.slice(0, 1)).map(([, v]) => v).join(' ') + '\n');
    return 0;
  };

  const date: CommandFn = (ctx) => {
    const { operands } = options(ctx.args);
    const now = new Date();
    const format = operands.find((o) => o.startsWith('+'));
    const local = (o: Intl.DateTimeFormatOptions) => new Intl.DateTimeFormat('en-US', { timeZone: system.timezone, ...o }).format(now);
    const two = (o: Intl.DateTimeFormatOptions) => local({ ...o, hourCycle: 'h23' }).padStart(2, '0');
    const zone = local({ timeZoneName: 'short' }).split(' ').pop() ?? 'UTC';
    const fields: Record<string, () => string> = {
      s: () => String(Math.floor(now.getTime() / 1000)), Y: () => local({ year: 'numeric' }), m: () => two({ month: '2-digit' }), d: () => two({ day: '2-digit' }),
      H: () => two({ hour: '2-digit' }), M: () => two({ minute: '2-digit' }), S: () => two({ second: '2-digit' }), Z: () => zone,
      a: () => local({ weekday: 'short' }), b: () => local({ month: 'short' }), e: () => local({ day: 'numeric' }).padStart(2, ' '),
      z: () => '+0000', N: () => String(now.getMilliseconds() * 1_000_000).padStart(9, '0'), '%': () => '%',
    };
    const text = (format ?? '+%a %b %e %H:%M:%S %Z %Y').slice(1).replace(/%([a-zA-Z%])/g, (m, f: string) => fields[f]?.() ?? m);
    ctx.io.stdout.write(text + '\n');
    return 0;
  };

  return {
    id: (ctx: CommandContext) => (ctx.io.stdout.write(`${ctx.args.includes('-u') ? '2000' : ctx.args.includes('-un') ? 'shell' : SHELL_ID}\n`), 0),
    whoami: (ctx) => (ctx.io.stdout.write('shell\n'), 0),
    hostname: (ctx) => (ctx.io.stdout.write(`${system.hostname}\n`), 0),
    getenforce: (ctx) => (ctx.io.stdout.write('Enforcing\n'), 0),
    ps, pidof, pgrep, pkill, kill, uname, date,
  };
}
