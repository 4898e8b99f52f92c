/** The shell's own commands: those that change the shell (cd, exit, read, ...) or run other commands (sh, eval, test). */
import { absoluteDevicePath } from '../device-fs';
import * as fs from 'node:fs';
import { CommandContext, CommandFn, ExitShell, SH, copyEnv } from './interpreter';
import { readLines } from './streams';
import { List, ShellSyntaxError, parseShell } from './syntax';

function test(args: string[], ctx: CommandContext): boolean {
  const fileTest = (op: string, p: string): boolean => {
    let st: fs.Stats | undefined;
    try {
      const host = ctx.session.host.files.hostPath(p, ctx.env.cwd, op !== '-L' && op !== '-h');
      st = (op === '-L' || op === '-h' ? fs.lstatSync : fs.statSync)(host, { throwIfNoEntry: false });
    } catch {
      st = undefined;
    }
    if (!st) return false;
    switch (op) {
      case '-d': return st.isDirectory();
      case '-f': return st.isFile();
      case '-L': case '-h': return st.isSymbolicLink();
      case '-s': return st.size > 0;
      default: return true;
    }
  };
  const unary = (op: string, a: string): boolean => (op === '-z' ? a === '' : op === '-n' ? a !== '' : fileTest(op, a));
  const ints = (a: string, b: string) => [Number.parseInt(a, 10) || 0, Number.parseInt(b, 10) || 0];
  const binary: Record<string, (a: string, b: string) => boolean> = {
    '=': (a, b) => a === b, '==': (a, b) => a === b, '!=': (a, b) => a !== b,
    '-eq': (a, b) => { const [x, y] = ints(a, b); return x === y; }, '-ne': (a, b) => { const [x, y] = ints(a, b); return x !== y; },
    '-lt': (a, b) => { const [x, y] = ints(a, b); return x < y; }, '-le': (a, b) => { const [x, y] = ints(a, b); return x <= y; },
    '-gt': (a, b) => { const [x, y] = ints(a, b); return x > y; }, '-ge': (a, b) => { const [x, y] = ints(a, b); return x >= y; },
  };
  const one = (a: string[]): boolean => {
    if (a[0] === '!' && a.length > 1) return !one(a.slice(1));
    if (a.length === 0) return false;
    if (a.length === 1) return a[0] !== '';
    if (a.length === 2) return unary(a[0], a[1]);
    if (a.length === 3 && binary[a[1]]) return binary[a[1]](a[0], a[2]);
    throw new Error(`${a[0]}: unknown operand`);
  };
  const or = args.indexOf('-o');
  if (or > 0) return test(args.slice(0, or), ctx) || test(args.slice(or + 1), ctx);
  const and = args.indexOf('-a');
  if (and > 0) return test(args.slice(0, and), ctx) && test(args.slice(and + 1), ctx);
  return one(args);
}

/** Commands of the shell itself, with no file in /system/bin (`which cd` finds nothing). */
export const SHELL_ONLY: ReadonlySet<string> = new Set([':', 'cd', 'exit', 'export', 'unset', 'shift', 'set', 'eval', 'exec', 'command', 'read']);

export const BUILTINS: Record<string, CommandFn> = {
  ':': () => 0,
  true: () => 0,
  false: () => 1,
  exit: ({ args, env }) => {
    throw new ExitShell(args[0] === undefined ? env.status : Number(args[0]) & 0xff);
  },
  cd: ({ args, env, io, session }) => {
    const target = absoluteDevicePath(args[0] ?? '/', env.cwd);
    try {
      if (!fs.statSync(session.host.files.hostPath(target)).isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR' });
    } catch {
      io.stderr.write(`${SH}: cd: ${target}: No such file or directory\n`);
      return 2;
    }
    env.cwd = target;
    return 0;
  },
  pwd: ({ env, io }) => (io.stdout.write(env.cwd + '\n'), 0),
  export: ({ args, env, session }) => {
    for (const a of args) {
      const eq = a.indexOf('=');
      if (eq > 0) session.setVar(env, a.slice(0, eq), a.slice(eq + 1));
    }
    return 0;
  },
  unset: ({ args, env }) => (args.forEach((a) => env.vars.delete(a)), 0),
  shift: ({ args, env }) => (env.args.splice(0, Number(args[0] ?? 1)), 0),
  set: ({ args, env }) => {
    const dash = args.indexOf('--');
    if (dash >= 0) env.args = args.slice(dash + 1);
    return 0;
  },
  eval: ({ args, env, io, session }) => session.run(args.join(' '), env, io),
  exec: ({ args, env, io, session }) => (args.length === 0 ? 0 : session.runCommand(args[0], args.slice(1), env, io)),
  command: ({ args, env, io, session }) => {
    if (args[0] === '-v' || args[0] === '-V') return BUILTINS.which({ name: 'which', args: args.slice(1), env, io, session });
    return args.length === 0 ? 0 : session.runCommand(args[0], args.slice(1), env, io);
  },
  which: ({ args, env, io, session }) => {
    let status = 0;
    for (const a of args.filter((x) => !x.startsWith('-'))) {
      const name = session.commandName(a, env);
      const file = `/system/bin/${name}`;
      if (name && !SHELL_ONLY.has(name) && fs.existsSync(session.host.files.hostPath(file))) io.stdout.write(`${file}\n`);
      else status = 1;
    }
    return status;
  },
  read: async ({ args, env, io, session }) => {
    const names = args.filter((a) => !a.startsWith('-'));
    const line = (await readLines(io.stdin).next()).value as string | undefined;
    if (line === undefined) return 1;
    const fields = line.replace(/\n$/, '').trim().split(/[ \t]+/);
    names.forEach((n, i) => session.setVar(env, n, i === names.length - 1 ? fields.slice(i).join(' ') : fields[i] ?? ''));
    return 0;
  },
  test: (ctx) => {
    try {
      return test(ctx.args, ctx) ? 0 : 1;
    } catch (e) {
      ctx.io.stderr.write(`test: ${(e as Error).message}\n`);
      return 2;
    }
  },
  '[': (ctx) => {
    if (ctx.args[ctx.args.length - 1] !== ']') {
      ctx.io.stderr.write('[: missing ]\n');
      return 2;
    }
    return BUILTINS.test({ ...ctx, args: ctx.args.slice(0, -1) });
  },
  sh: async (ctx) => {
    const { args, env, io, session } = ctx;
    const c = args.indexOf('-c');
    const sub = copyEnv(env);
    if (c >= 0) {
      sub.args = args.slice(c + 3);
      return args[c + 1] === undefined ? (io.stderr.write(`${SH}: -c: option requires an argument\n`), 2) : session.run(args[c + 1], sub, io);
    }
    const script = args.find((a) => !a.startsWith('-'));
    if (script) {
      let source: string;
      try {
        source = fs.readFileSync(session.host.files.hostPath(script, env.cwd), 'utf8');
      } catch {
        io.stderr.write(`${SH}: ${script}: No such file or directory\n`);
        return 127;
      }
      sub.args = args.slice(args.indexOf(script) + 1);
      return session.run(source, sub, io);
    }
    return runInteractive(sub, ctx);
  },
};

/** Commands from the input, one line at a time, as `adb shell` without a command runs them. */
export async function runInteractive(env: CommandContext['env'], ctx: CommandContext): Promise<number> {
  let pending = '';
  for await (const line of readLines(ctx.io.stdin)) {
    pending += line;
    let list: List;
    try {
      list = parseShell(pending);
    } catch (e) {
      if (!(e instanceof ShellSyntaxError)) throw e;
      if (/EOF|no closing quote/.test(e.message)) continue; // the command goes on on the next line
      ctx.io.stderr.write(`${SH}: syntax error: ${e.message}\n`);
      pending = '';
      continue;
    }
    pending = '';
    try {
      await ctx.session.runList(list, env, ctx.io);
    } catch (e) {
      if (e instanceof ExitShell) return e.status;
      throw e;
    }
  }
  return env.status;
}
