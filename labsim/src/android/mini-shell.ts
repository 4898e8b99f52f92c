/**
 * The device shell, in process, for the command lines hosts really send: `getprop x`, batches like
 * `echo @@a; pm list packages 2>/dev/null; echo @@b; cat /proc/meminfo`, `dumpsys package x | grep -E '...'`,
 * `a || b`, `>&2`, `exit 3`, globs in absolute paths. Every device tool and the few toybox commands below run
 * without a child process, so a lab of hundreds of simulated devices costs no process per command.
 *
 * Anything outside this subset (`$`, loops, file redirections, stdin, unknown commands) makes `planShell` return
 * null and the caller runs the real `/bin/sh` with the tool scripts, exactly as before: the subset only decides
 * where a command runs, never what it prints.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ShellIO } from '../adbd/device-port';
import type { ToolIO } from './tool-io';

export interface ShellHost {
  /** Device tools (`getprop`, `pm`, ...). */
  readonly toolNames: ReadonlySet<string>;
  runTool(tool: string, args: string[], io: ToolIO): Promise<number>;
  /** Host path of a device path. */
  hostPath(devicePath: string): string;
}

interface Word { text: string; glob: boolean }
/** `fd` goes to /dev/null ('null') or to what the other descriptor points at. */
interface Redirect { fd: 1 | 2; to: 'null' | 1 | 2 }
interface Command { words: Word[]; redirects: Redirect[] }
type Pipeline = Command[];
interface AndOr { first: Pipeline; rest: Array<{ op: '&&' | '||'; pipeline: Pipeline }> }

type Token = { kind: 'word'; word: Word } | { kind: 'op'; op: ';' | '&&' | '||' | '|' } | { kind: 'redir'; redirect: Redirect };

const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'while', 'until', 'for', 'do', 'done', 'case', 'esac', 'function', '!', '{', '}', '[[', ']]', 'select', 'time']);
/** Commands reading stdin when given no file: fine after a `|`, not as the first stage (there is no stdin here). */
const FILTERS = new Set(['cat', 'grep', 'head', 'tail', 'wc']);
const BUILTINS = new Set(['echo', 'true', 'false', 'exit', 'cat', 'rm', 'grep', 'head', 'tail', 'wc', 'df', 'mkdir', 'sleep']);
class Unsupported extends Error {}
class ExitScript { constructor(readonly status: number) {} }

function tokenize(line: string): Token[] {
  const tokens: Token[] = [];
  let text = '';
  let started = false; // a word is open (possibly empty: '')
  let quoted = false;
  let glob = false;
  const flush = () => {
    if (started) tokens.push({ kind: 'word', word: { text, glob } });
    text = '';
    started = quoted = glob = false;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === ' ' || c === '\t') flush();
    else if (c === ';' || c === '\n') { flush(); tokens.push({ kind: 'op', op: ';' }); }
    else if (c === '|') { flush(); tokens.push({ kind: 'op', op: line[i + 1] === '|' ? '||' : '|' }); if (line[i + 1] === '|') i++; }
    else if (c === '&') {
      if (line[i + 1] !== '&') throw new Unsupported('background job');
      flush(); tokens.push({ kind: 'op', op: '&&' }); i++;
    } else if (c === '>') {
      // `2>` : the digits before `>` name the descriptor when they form the whole unquoted word so far.
      let fd: 1 | 2 = 1;
      if (started && !quoted && (text === '1' || text === '2')) { fd = Number(text) as 1 | 2; started = false; text = ''; }
      flush();
      if (line[i + 1] === '>') i++;
      let j = i + 1;
      while (line[j] === ' ') j++;
      if (line[j] === '&' && (line[j + 1] === '1' || line[j + 1] === '2')) {
        tokens.push({ kind: 'redir', redirect: { fd, to: Number(line[j + 1]) as 1 | 2 } });
        i = j + 1;
      } else if (line.startsWith('/dev/null', j) && /^($|[\s;|&])/.test(line.slice(j + 9))) {
        tokens.push({ kind: 'redir', redirect: { fd, to: 'null' } });
        i = j + 8;
      } else throw new Unsupported('file redirection');
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Unsupported('unterminated quote');
      text += line.slice(i + 1, end);
      started = quoted = true;
      i = end;
    } else if (c === '"') {
      started = quoted = true;
      for (i++; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === '$' || line[i] === '`') throw new Unsupported('expansion');
        if (line[i] === '\\' && '"\\$`\n'.includes(line[i + 1] ?? '')) i++;
        text += line[i];
      }
      if (i >= line.length) throw new Unsupported('unterminated quote');
    } else if (c === '\\') {
      if (i + 1 >= line.length || line[i + 1] === '\n') throw new Unsupported('line continuation');
      text += line[++i];
      started = quoted = true;
    } else if ('$`()<'.includes(c) || (c === '#' && !started) || (c === '~' && !started)) {
      throw new Unsupported(`shell syntax ${c}`);
    } else {
      if ('*?['.includes(c)) glob = true;
      text += c;
      started = true;
    }
  }
  flush();
  return tokens;
}

function parse(tokens: Token[]): AndOr[] {
  const script: AndOr[] = [];
  let command: Command = { words: [], redirects: [] };
  let pipeline: Pipeline = [];
  let andOr: AndOr | null = null;
  let pendingOp: '&&' | '||' | null = null;
  const endCommand = () => {
    if (command.words.length === 0) throw new Unsupported('empty command');
    pipeline.push(command);
    command = { words: [], redirects: [] };
  };
  const endPipeline = () => {
    endCommand();
    if (!andOr) andOr = { first: pipeline, rest: [] };
    else andOr.rest.push({ op: pendingOp!, pipeline });
    pipeline = [];
  };
  for (const t of tokens) {
    if (t.kind === 'word') command.words.push(t.word);
    else if (t.kind === 'redir') command.redirects.push(t.redirect);
    else if (t.op === '|') endCommand();
    else if (t.op === '&&' || t.op === '||') { endPipeline(); pendingOp = t.op; }
    else if (command.words.length > 0 || pipeline.length > 0) { endPipeline(); script.push(andOr!); andOr = null; }
    else if (andOr || pendingOp) throw new Unsupported('empty command');
  }
  if (command.words.length > 0 || pipeline.length > 0 || andOr) { endPipeline(); script.push(andOr!); }
  return script;
}

/** `/system/bin/getprop` is `getprop`; other paths are not ours. */
function commandName(word: Word): string {
  const name = word.text.startsWith('/system/bin/') ? word.text.slice(12) : word.text;
  if (word.glob || name.includes('/') || name.includes('=') || KEYWORDS.has(name)) throw new Unsupported(name);
  return name;
}

function checkPipeline(host: ShellHost, pipeline: Pipeline): void {
  pipeline.forEach((command, stage) => {
    const name = commandName(command.words[0]);
    const args = command.words.slice(1).map((w) => w.text);
    if (!host.toolNames.has(name) && !BUILTINS.has(name)) throw new Unsupported(name);
    const files = args.filter((a) => !a.startsWith('-'));
    if (stage === 0 && FILTERS.has(name) && (name === 'grep' ? files.length < 2 : files.length === 0)) throw new Unsupported('stdin');
    if (name === 'echo' && args.some((a) => a.includes('\\'))) throw new Unsupported('echo escapes'); // dash's echo interprets them
    if (name === 'cat' && args.some((a) => a.startsWith('-'))) throw new Unsupported('cat options');
    if (name === 'df' && files.length === 0) throw new Unsupported('df without a path');
    if ((name === 'pm' || name === 'cmd') && args.includes('-S')) throw new Unsupported('install from stdin');
    // A following logcat never ends by itself, so it cannot feed a buffered pipe.
    if (name === 'logcat' && pipeline.length > 1 && !args.some((a) => a === '-d' || a === '-t' || a === '-c')) throw new Unsupported('logcat pipe');
  });
}

/** The parsed script when every part of `line` runs in process, else null. */
export function planShell(host: ShellHost, line: string): AndOr[] | null {
  try {
    const script = parse(tokenize(line));
    if (script.length === 0) return null;
    for (const andOr of script) {
      checkPipeline(host, andOr.first);
      for (const r of andOr.rest) checkPipeline(host, r.pipeline);
    }
    return script;
  } catch (e) {
    if (e instanceof Unsupported) return null;
    throw e;
  }
}

/** Runs a script from `planShell`; resolves with the exit status of the last pipeline. */
export async function runShellScript(host: ShellHost, script: AndOr[], io: ShellIO): Promise<number> {
  let gone = false;
  void io.gone.then(() => (gone = true));
  let status = 0;
  try {
    for (const andOr of script) {
      if (gone) break;
      status = await runPipeline(host, andOr.first, io);
      for (const { op, pipeline } of andOr.rest) {
        if (gone) break;
        if ((op === '&&') === (status === 0)) status = await runPipeline(host, pipeline, io);
      }
    }
  } catch (e) {
    if (e instanceof ExitScript) return e.status;
    throw e;
  }
  return status;
}

async function runPipeline(host: ShellHost, pipeline: Pipeline, io: ShellIO): Promise<number> {
  let input: Buffer | undefined;
  let status = 0;
  for (let i = 0; i < pipeline.length; i++) {
    const last = i === pipeline.length - 1;
    const piped: Buffer[] = [];
    const stdout = last ? (d: Buffer) => io.out(d) : (d: Buffer) => piped.push(d);
    status = await runCommand(host, pipeline[i], input, stdout, (d) => io.err(d), io.gone);
    input = last ? undefined : Buffer.concat(piped);
  }
  return status;
}

type Sink = (data: Buffer) => void;

async function runCommand(host: ShellHost, command: Command, stdin: Buffer | undefined, out: Sink, err: Sink, gone: Promise<void>): Promise<number> {
  const sinks: Record<1 | 2, Sink> = { 1: out, 2: err };
  for (const r of command.redirects) sinks[r.fd] = r.to === 'null' ? () => undefined : sinks[r.to];
  const name = commandName(command.words[0]);
  const args = command.words.slice(1).flatMap((w) => (w.glob ? expandGlob(host, w.text) : [w.text]));
  const toolIO: ToolIO = {
    out: (d) => sinks[1](typeof d === 'string' ? Buffer.from(d) : d),
    err: (d) => sinks[2](Buffer.from(d)),
    gone,
  };
  if (host.toolNames.has(name)) return host.runTool(name, args, toolIO);
  return runBuiltin(host, name, args, stdin ?? Buffer.alloc(0), toolIO);
}

/** Absolute-path globs against the sandbox; no match leaves the word as it is, as sh does. */
function expandGlob(host: ShellHost, pattern: string): string[] {
  if (!pattern.startsWith('/')) throw new Unsupported('relative glob');
  let paths = [''];
  for (const part of pattern.split('/').slice(1)) {
    if (!/[*?[]/.test(part)) {
      paths = paths.map((p) => `${p}/${part}`);
      continue;
    }
    const re = new RegExp('^' + part.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$');
    paths = paths.flatMap((p) => {
      try {
        return fs.readdirSync(host.hostPath(p || '/')).filter((n) => re.test(n) && (!n.startsWith('.') || part.startsWith('.'))).sort().map((n) => `${p}/${n}`);
      } catch {
        return [];
      }
    });
  }
  const found = paths.filter((p) => fs.existsSync(host.hostPath(p)));
  return found.length > 0 ? found : [pattern];
}

function textLines(data: Buffer): string[] {
  const all = data.toString('utf8').split('\n');
  if (all[all.length - 1] === '') all.pop();
  return all;
}

/** `-n 5`, `-n5` or `-5`; the remaining arguments are files. */
function countOption(args: string[], fallback: number): { count: number; files: string[] } {
  let count = fallback;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-n') count = Number(args[++i]);
    else if (/^-n\d+$/.test(a)) count = Number(a.slice(2));
    else if (/^-\d+$/.test(a)) count = Number(a.slice(1));
    else files.push(a);
  }
  return { count, files };
}

function readInputs(host: ShellHost, name: string, files: string[], stdin: Buffer, io: ToolIO): { data: Buffer; status: number } {
  if (files.length === 0) return { data: stdin, status: 0 };
  const parts: Buffer[] = [];
  let status = 0;
  for (const file of files) {
    const hostFile = host.hostPath(file.startsWith('/') ? file : `/${file}`);
    try {
      parts.push(fs.readFileSync(hostFile));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      io.err(`${name}: ${file}: ${code === 'EISDIR' ? 'Is a directory' : code === 'EACCES' ? 'Permission denied' : 'No such file or directory'}\n`);
      status = 1;
    }
  }
  return { data: Buffer.concat(parts), status };
}

async function runBuiltin(host: ShellHost, name: string, args: string[], stdin: Buffer, io: ToolIO): Promise<number> {
  switch (name) {
    case 'true':
      return 0;
    case 'false':
      return 1;
    case 'exit':
      throw new ExitScript(args[0] === undefined ? 0 : Number(args[0]) & 0xff);
    case 'echo': {
      const noNewline = args[0] === '-n';
      io.out((noNewline ? args.slice(1) : args).join(' ') + (noNewline ? '' : '\n'));
      return 0;
    }
    case 'cat': {
      const { data, status } = readInputs(host, name, args, stdin, io);
      io.out(data);
      return status;
    }
    case 'head':
    case 'tail': {
      const { count, files } = countOption(args, 10);
      const { data, status } = readInputs(host, name, files, stdin, io);
      const all = textLines(data);
      const kept = name === 'head' ? all.slice(0, count) : all.slice(Math.max(0, all.length - count));
      if (kept.length > 0) io.out(kept.join('\n') + '\n');
      return status;
    }
    case 'wc': {
      const { data, status } = readInputs(host, name, args.filter((a) => a !== '-l'), stdin, io);
      io.out(`${textLines(data).length}\n`);
      return status;
    }
    case 'grep':
      return grep(host, args, stdin, io);
    case 'rm': {
      const flags = args.filter((a) => a.startsWith('-')).join('');
      let status = 0;
      for (const file of args.filter((a) => !a.startsWith('-'))) {
        const hostFile = host.hostPath(file);
        if (!fs.existsSync(hostFile) && !fs.lstatSync(hostFile, { throwIfNoEntry: false })) {
          if (!flags.includes('f')) { io.err(`rm: ${file}: No such file or directory\n`); status = 1; }
          continue;
        }
        fs.rmSync(hostFile, { recursive: flags.includes('r') || flags.includes('R'), force: true });
      }
      return status;
    }
    case 'mkdir':
      for (const dir of args.filter((a) => !a.startsWith('-'))) fs.mkdirSync(host.hostPath(dir), { recursive: true });
      return 0;
    case 'sleep': {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([io.gone, new Promise<void>((r) => (timer = setTimeout(r, Number(args[0] ?? 0) * 1000)))]);
      clearTimeout(timer);
      return 0;
    }
    case 'df':
      return df(host, args.filter((a) => !a.startsWith('-')), io);
    default:
      throw new Error(`no builtin ${name}`);
  }
}

function grep(host: ShellHost, args: string[], stdin: Buffer, io: ToolIO): number {
  let extended = false, fixed = false, invert = false, quiet = false, ignoreCase = false;
  let pattern: string | undefined;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-e') pattern = args[++i];
    else if (/^-[EFviq]+$/.test(a)) {
      extended ||= a.includes('E'); fixed ||= a.includes('F'); invert ||= a.includes('v'); quiet ||= a.includes('q'); ignoreCase ||= a.includes('i');
    } else if (pattern === undefined) pattern = a;
    else files.push(a);
  }
  let re: RegExp;
  try {
    // Basic regular expressions only where they mean the same as JavaScript's (no \( \| \{ and no + ? | ( {).
    if (!fixed && !extended && /[\\+?|(){}]/.test(pattern ?? '')) throw new Error('unsupported basic regular expression');
    re = new RegExp(fixed ? (pattern ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : pattern ?? '', ignoreCase ? 'i' : '');
  } catch (e) {
    io.err(`grep: ${(e as Error).message}\n`);
    return 2;
  }
  const { data, status } = readInputs(host, 'grep', files, stdin, io);
  const matched = textLines(data).filter((l) => re.test(l) !== invert);
  if (!quiet && matched.length > 0) io.out(matched.join('\n') + '\n');
  return status !== 0 ? 2 : matched.length > 0 ? 0 : 1;
}

/** toybox `df`: 1K blocks of the file system holding the path, shown under the device path. */
function df(host: ShellHost, paths: string[], io: ToolIO): number {
  const rows = ['Filesystem        1K-blocks     Used Available Use% Mounted on'];
  let status = 0;
  for (const p of paths) {
    try {
      const s = fs.statfsSync(host.hostPath(p));
      const k = s.bsize / 1024;
      const total = Math.round(s.blocks * k);
      const used = Math.round((s.blocks - s.bfree) * k);
      const avail = Math.round(s.bavail * k);
      const pct = used + avail > 0 ? Math.ceil((used * 100) / (used + avail)) : 0;
      const mount = '/' + path.posix.normalize(p).split('/').filter(Boolean)[0];
      rows.push(`/dev/block/dm-${mount === '/data' ? 48 : 6} ${String(total).padStart(14)} ${String(used).padStart(8)} ${String(avail).padStart(9)} ${String(pct).padStart(3)}% ${mount}`);
    } catch {
      io.err(`df: ${p}: No such file or directory\n`);
      status = 1;
    }
  }
  io.out(rows.join('\n') + '\n');
  return status;
}
