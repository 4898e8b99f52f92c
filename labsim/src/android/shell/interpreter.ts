/**
 * The device shell, interpreted inside the simulator over the device's own file tree: every command is a device
 * tool or a toybox command of this module's table, and nothing reaches a host program or a host path. Unknown
 * commands answer as Android's shell does (`inaccessible or not found`, 127).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DeviceFileError, DeviceFs, absoluteDevicePath } from '../device-fs';
import type { ToolIO } from '../tool-io';
import { ArithmeticError, evaluateArithmetic } from './arith';
import { globMatch } from './glob';
import { BrokenPipe, Input, Output, Pipe, bufferInput, readAll, sinkOutput } from './streams';
import { AndOr, List, Node, Pipeline, Redirect, ShellSyntaxError, Word, parseShell } from './syntax';

export const SH = '/system/bin/sh';
/** Largest text a word, a variable or a command substitution may hold. */
export const MAX_TEXT = 4 * 1024 * 1024;
/** Free space on the host's disk that device writes never take. */
const HOST_RESERVE = 1024 ** 3;

export interface ShellEnv {
  vars: Map<string, string>;
  cwd: string;
  status: number;
  args: string[];
}

export interface Streams {
  stdin: Input;
  stdout: Output;
  stderr: Output;
}

export interface CommandContext {
  name: string;
  args: string[];
  env: ShellEnv;
  io: Streams;
  session: ShellSession;
}

export type CommandFn = (ctx: CommandContext) => Promise<number> | number;

export interface ShellHost {
  readonly files: DeviceFs;
  readonly toolNames: ReadonlySet<string>;
  runTool(tool: string, args: string[], io: ToolIO): Promise<number>;
  /**
   * Runs a program that is not a device tool (a binary pushed to the device, `app_process`) when the device knows
   * it: `word` is the command as typed (a path made absolute), `vars` its environment. Undefined: not such a program.
   */
  runProgram?(word: string, args: string[], vars: ReadonlyMap<string, string>, io: ToolIO): Promise<number> | undefined;
}

/** `exit`, or a fatal error of the shell itself. */
export class ExitShell {
  constructor(readonly status: number) {}
}
/** The host closed the stream: everything still running stops. */
class SessionGone {}
/** A message and status the shell prints for a command (bad redirection, bad substitution). */
export class ShellError extends Error {
  constructor(message: string, readonly status = 1) {
    super(message);
  }
}

export function errorText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (e instanceof DeviceFileError) return e.message;
  return code === 'ENOENT' ? 'No such file or directory' : code === 'EISDIR' ? 'Is a directory' : code === 'ENOTDIR' ? 'Not a directory'
    : code === 'ENOSPC' ? 'No space left on device' : code === 'EEXIST' ? 'File exists' : code === 'ENOTEMPTY' ? 'Directory not empty' : code === 'EROFS' ? 'Read-only file system' : 'Permission denied';
}

export class ShellSession {
  private ended = false;
  readonly gone: Promise<void>;

  constructor(readonly host: ShellHost, readonly commands: ReadonlyMap<string, CommandFn>, gone: Promise<void>) {
    this.gone = gone.then(() => {
      this.ended = true;
    });
  }

  newEnv(): ShellEnv {
    return {
      vars: new Map(Object.entries({ PATH: '/product/bin:/apex/com.android.runtime/bin:/apex/com.android.art/bin:/system_ext/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin:/vendor/xbin', HOME: '/', USER: 'shell', HOSTNAME: 'localhost', SHELL: SH, TMPDIR: '/data/local/tmp', ANDROID_DATA: '/data', ANDROID_ROOT: '/system', EXTERNAL_STORAGE: '/sdcard', IFS: ' \t\n' })),
      cwd: '/',
      status: 0,
      args: [],
    };
  }

  /** Parses and runs `source`; syntax errors answer as the device's shell does. */
  async run(source: string, env: ShellEnv, io: Streams): Promise<number> {
    let list: List;
    try {
      list = parseShell(source);
    } catch (e) {
      if (!(e instanceof ShellSyntaxError)) throw e;
      io.stderr.write(`${SH}: syntax error: ${e.message}\n`);
      return 1;
    }
    try {
      return await this.runList(list, env, io);
    } catch (e) {
      if (e instanceof ExitShell) return e.status;
      if (e instanceof SessionGone) return 255;
      throw e;
    }
  }

  // ---- execution ----------------------------------------------------------

  async runList(list: List, env: ShellEnv, io: Streams): Promise<number> {
    for (const andOr of list) {
      if (andOr.background) {
        void this.runAndOr(andOr, copyEnv(env), { ...io, stdin: bufferInput(Buffer.alloc(0)) }).catch(() => undefined);
        env.status = 0;
      } else env.status = await this.runAndOr(andOr, env, io);
    }
    return env.status;
  }

  private async runAndOr(andOr: AndOr, env: ShellEnv, io: Streams): Promise<number> {
    let status = await this.runPipeline(andOr.first, env, io);
    for (const { op, pipeline } of andOr.rest) {
      env.status = status;
      if ((op === '&&') === (status === 0)) status = await this.runPipeline(pipeline, env, io);
    }
    return status;
  }

  private async runPipeline(pipeline: Pipeline, env: ShellEnv, io: Streams): Promise<number> {
    let status: number;
    if (pipeline.commands.length === 1) status = await this.runNode(pipeline.commands[0], env, io);
    else {
      const pipes = pipeline.commands.slice(1).map(() => new Pipe());
      const stages = pipeline.commands.map(async (node, i) => {
        const stdin = i === 0 ? io.stdin : pipes[i - 1];
        const stdout = i === pipes.length ? io.stdout : pipes[i];
        try {
          return await this.runNode(node, copyEnv(env), { stdin, stdout, stderr: io.stderr });
        } catch (e) {
          if (e instanceof ExitShell) return e.status;
          throw e;
        } finally {
          if (i < pipes.length) pipes[i].end();
          if (i > 0) pipes[i - 1].close();
        }
      });
      status = (await Promise.all(stages))[stages.length - 1];
    }
    return pipeline.negated ? Number(status === 0) : status;
  }

  private async runNode(node: Node, env: ShellEnv, outer: Streams): Promise<number> {
    if (this.ended) throw new SessionGone();
    // One turn of the event loop per command: a tight loop must not stall the other devices' traffic.
    await new Promise((resolve) => setImmediate(resolve));
    let io: Streams;
    let close: () => void;
    try {
      ({ io, close } = await this.redirect(node.redirects, env, outer));
    } catch (e) {
      if (!(e instanceof ShellError)) throw e;
      outer.stderr.write(`${SH}: ${e.message}\n`);
      return e.status;
    }
    try {
      return await this.runNodeWith(node, env, io);
    } catch (e) {
      if (e instanceof BrokenPipe) return 141;
      if (e instanceof ShellError) {
        io.stderr.write(`${SH}: ${e.message}\n`);
        return e.status;
      }
      throw e;
    } finally {
      close();
    }
  }

  private async runNodeWith(node: Node, env: ShellEnv, io: Streams): Promise<number> {
    switch (node.kind) {
      case 'simple':
        return this.runSimple(node, env, io);
      case 'group':
        return this.runList(node.body, node.subshell ? copyEnv(env) : env, io).catch((e) => {
          if (node.subshell && e instanceof ExitShell) return e.status;
          throw e;
        });
      case 'if':
        for (const clause of node.clauses) {
          if ((await this.runList(clause.condition, env, io)) === 0) return this.runList(clause.body, env, io);
        }
        return node.otherwise ? this.runList(node.otherwise, env, io) : 0;
      case 'loop': {
        let status = 0;
        while (((await this.runList(node.condition, env, io)) === 0) !== node.until) {
          status = await this.runList(node.body, env, io);
          await io.stdout.drain();
        }
        return status;
      }
      case 'for': {
        const items = node.items ? await this.expandWords(node.items, env, io) : env.args;
        let status = 0;
        for (const item of items) {
          this.setVar(env, node.name, item);
          status = await this.runList(node.body, env, io);
          await io.stdout.drain();
        }
        return status;
      }
    }
  }

  private async runSimple(node: Extract<Node, { kind: 'simple' }>, env: ShellEnv, io: Streams): Promise<number> {
    const words = await this.expandWords(node.words, env, io);
    if (words.length === 0) {
      for (const a of node.assignments) this.setVar(env, a.name, (await this.expandWord(a.value, env, io, false))[0] ?? '');
      return env.status;
    }
    if (node.assignments.length === 0) return this.runCommand(words[0], words.slice(1), env, io);
    // Assignments before a command are that command's environment only.
    const commandEnv = copyEnv(env);
    for (const a of node.assignments) this.setVar(commandEnv, a.name, (await this.expandWord(a.value, commandEnv, io, false))[0] ?? '');
    return this.runCommand(words[0], words.slice(1), commandEnv, io);
  }

  /** Runs one command by name: a device tool, a command of the table, or "not found". */
  async runCommand(word: string, args: string[], env: ShellEnv, io: Streams): Promise<number> {
    const toolIO: ToolIO = {
      out: (d) => io.stdout.write(d),
      err: (d) => io.stderr.write(d),
      gone: Promise.race([this.gone, io.stdout.broken]),
    };
    const program = this.host.runProgram?.(word.includes('/') ? absoluteDevicePath(word, env.cwd) : word, args, env.vars, toolIO);
    if (program) return program;
    const name = this.commandName(word, env);
    if (name === null) {
      const exists = word.includes('/') && this.exists(word, env);
      io.stderr.write(exists ? `${SH}: ${word}: can't execute: Permission denied\n` : `${SH}: ${word}: inaccessible or not found\n`);
      return exists ? 126 : 127;
    }
    if (this.host.toolNames.has(name)) {
      // A tool that fails unexpectedly answers as an Android service does, and the script goes on.
      return this.host.runTool(name, args, toolIO).catch((e: unknown) => {
        if (e instanceof BrokenPipe || e instanceof ShellError || !(e instanceof Error)) throw e;
        io.stderr.write(`Exception occurred while executing '${args[0] ?? name}':\n${e.message}\n`);
        return 255;
      });
    }
    return this.commands.get(name)!({ name, args, env, io, session: this });
  }

  /** The command a word names (`ls`, `/system/bin/ls`), or null. */
  commandName(word: string, env: ShellEnv): string | null {
    const known = (n: string) => this.host.toolNames.has(n) || this.commands.has(n);
    if (!word.includes('/')) return known(word) ? word : null;
    const p = absoluteDevicePath(word, env.cwd);
    const slash = p.lastIndexOf('/');
    return ['/system/bin', '/bin', '/system/xbin'].includes(p.slice(0, slash)) && known(p.slice(slash + 1)) ? p.slice(slash + 1) : null;
  }

  private exists(devicePath: string, env: ShellEnv): boolean {
    try {
      return fs.existsSync(this.host.files.hostPath(devicePath, env.cwd));
    } catch {
      return false;
    }
  }

  setVar(env: ShellEnv, name: string, value: string): void {
    if (value.length > MAX_TEXT) throw new ShellError(`${name}: out of memory`);
    env.vars.set(name, value);
  }

  // ---- files --------------------------------------------------------------

  /** The host file of a device path the shell user may write; an errno-coded error says why not. */
  writablePath(devicePath: string, env: ShellEnv, followLast = true): string {
    return this.host.files.writableHostPath(devicePath, env.cwd, followLast);
  }

  /**
   * Refuses a write that would leave the host's disk nearly full: the device's storage is the host's, and a
   * `cat /dev/zero > /sdcard/f` must fill the device, not the host.
   */
  reserveSpace(hostFile: string, bytes: number): void {
    const s = fs.statfsSync(path.dirname(hostFile));
    const free = s.bavail * s.bsize;
    if (free - bytes < Math.max(HOST_RESERVE, s.blocks * s.bsize * 0.05)) throw Object.assign(new Error('No space left on device'), { code: 'ENOSPC' });
  }

  /** Input from a device file; `/dev/null`, `/dev/zero` and `/dev/urandom` are the kernel's. */
  openInput(devicePath: string, env: ShellEnv): Input {
    const p = absoluteDevicePath(devicePath, env.cwd);
    if (p === '/dev/null') return bufferInput(Buffer.alloc(0));
    if (p === '/dev/zero' || p === '/dev/urandom' || p === '/dev/random') {
      let closed = false;
      // A turn of the event loop per chunk, so an endless reader never starves the rest of the simulator.
      return {
        read: () => new Promise((resolve) => setImmediate(() => resolve(closed || this.ended ? null : p === '/dev/zero' ? Buffer.alloc(65536) : randomBytes(65536)))),
        close: () => (closed = true),
      };
    }
    return bufferInput(fs.readFileSync(this.host.files.hostPath(p)));
  }

  private async redirect(redirects: Redirect[], env: ShellEnv, outer: Streams): Promise<{ io: Streams; close: () => void }> {
    const io: Streams = { ...outer };
    const fds: number[] = [];
    const close = () => fds.forEach((fd) => fs.closeSync(fd));
    try {
      for (const r of redirects) {
        const [target = ''] = await this.expandWord(r.target, env, io, false);
        const slot = r.fd === 0 ? 'stdin' : r.fd === 1 ? 'stdout' : r.fd === 2 ? 'stderr' : null;
        if (slot === null) throw new ShellError(`${r.fd}: bad file descriptor`);
        if (r.op === '>&' || r.op === '<&') {
          if (target === '-') continue;
          const from = target === '0' ? 'stdin' : target === '1' ? 'stdout' : target === '2' ? 'stderr' : null;
          if (from === null || (slot === 'stdin') !== (from === 'stdin')) throw new ShellError(`${target}: bad file descriptor`);
          (io as unknown as Record<string, unknown>)[slot] = io[from];
          continue;
        }
        const devicePath = absoluteDevicePath(target, env.cwd);
        try {
          if (r.op === '<') {
            if (slot !== 'stdin') throw new ShellError(`${r.fd}: bad file descriptor`);
            io.stdin = this.openInput(target, env);
          } else if (slot === 'stdin') throw new ShellError(`${r.fd}: bad file descriptor`);
          else if (devicePath === '/dev/null' || devicePath === '/dev/zero') io[slot] = sinkOutput(() => undefined);
          else {
            const file = this.writablePath(target, env);
            const fd = fs.openSync(file, r.op === '>>' || r.op === '<>' ? 'a' : 'w', 0o666);
            fds.push(fd);
            io[slot] = sinkOutput((d) => {
              try {
                this.reserveSpace(file, d.length);
                fs.writeSync(fd, d);
              } catch (e) {
                throw new ShellError(`write error: ${errorText(e)}`);
              }
            });
          }
        } catch (e) {
          if (e instanceof ShellError) throw e;
          throw new ShellError(`can't ${r.op === '<' ? 'open' : 'create'} ${target}: ${errorText(e)}`);
        }
      }
    } catch (e) {
      close();
      throw e;
    }
    return { io, close };
  }

  // ---- expansion ----------------------------------------------------------

  async expandWords(words: Word[], env: ShellEnv, io: Streams): Promise<string[]> {
    const fields: string[] = [];
    for (const w of words) fields.push(...(await this.expandWord(w, env, io, true)));
    return fields;
  }

  /** A word's fields: parameters and substitutions, field splitting and globbing where unquoted (`split`). */
  async expandWord(word: Word, env: ShellEnv, io: Streams, split: boolean): Promise<string[]> {
    const fields: Array<{ text: string; pattern: string; glob: boolean }> = [];
    let current: { text: string; pattern: string; glob: boolean } | null = null;
    const add = (text: string, quoted: boolean, splittable: boolean) => {
      if (splittable && split) {
        const pieces = text.split(/[ \t\n]+/);
        pieces.forEach((piece, i) => {
          if (i > 0 && current) {
            fields.push(current);
            current = null;
          }
          if (piece) append(piece, false);
        });
      } else append(text, quoted);
      if (quoted && !current) current = { text: '', pattern: '', glob: false };
    };
    const append = (text: string, quoted: boolean) => {
      current ??= { text: '', pattern: '', glob: false };
      current.text += text;
      current.pattern += quoted ? text.replace(/[*?[\\]/g, '\\$&') : text;
      if (!quoted && /[*?[]/.test(text)) current.glob = true;
      if (current.text.length > MAX_TEXT) throw new ShellError('out of memory');
    };
    for (const part of word) {
      if (part.kind === 'text') add(part.text, part.quoted, false);
      else if (part.kind === 'param') add(this.param(part.name, env), part.quoted, !part.quoted);
      else if (part.kind === 'arith') {
        const expression = (await this.expandWord([{ kind: 'text', text: part.expression, quoted: true }], env, io, false))[0];
        try {
          add(String(evaluateArithmetic(expression, (n) => this.param(n, env))), part.quoted, !part.quoted);
        } catch (e) {
          if (e instanceof ArithmeticError) throw new ShellError(e.message);
          throw e;
        }
      } else {
        const out: Buffer[] = [];
        let size = 0;
        const sub = copyEnv(env);
        env.status = await this.runList(part.body, sub, { stdin: bufferInput(Buffer.alloc(0)), stderr: io.stderr, stdout: sinkOutput((d) => {
          size += d.length;
          if (size > MAX_TEXT) throw new ShellError('out of memory');
          out.push(d);
        }) }).catch((e) => (e instanceof ExitShell ? e.status : Promise.reject(e)));
        add(Buffer.concat(out).toString('utf8').replace(/\n+$/, ''), part.quoted, !part.quoted);
      }
    }
    if (current) fields.push(current);
    return fields.flatMap((f) => (f.glob && split ? this.glob(f.pattern, env) ?? [f.text] : [f.text]));
  }

  private param(name: string, env: ShellEnv): string {
    if (name === '?') return String(env.status);
    if (name === '#') return String(env.args.length);
    if (name === '$') return '4242';
    if (name === '@' || name === '*') return env.args.join(' ');
    if (name === '0') return SH;
    if (/^\d$/.test(name)) return env.args[Number(name) - 1] ?? '';
    return env.vars.get(name) ?? '';
  }

  /** Device paths matching a pattern, sorted; null when none matches. */
  glob(pattern: string, env: ShellEnv): string[] | null {
    const absolute = pattern.startsWith('/');
    let paths = [absolute ? '/' : ''];
    for (const part of pattern.split('/').filter(Boolean)) {
      if (!/(^|[^\\])[*?[]/.test(part)) {
        const literal = part.replace(/\\(.)/g, '$1');
        paths = paths.map((p) => (p === '' ? literal : p.endsWith('/') ? p + literal : `${p}/${literal}`));
        continue;
      }
      paths = paths.flatMap((p) => {
        try {
          const dir = this.host.files.hostPath(p || '.', env.cwd);
          return fs.readdirSync(dir).filter((n) => globMatch(part, n) && (!n.startsWith('.') || part.startsWith('.'))).sort()
            .map((n) => (p === '' ? n : p.endsWith('/') ? p + n : `${p}/${n}`));
        } catch {
          return [];
        }
      });
    }
    const found = paths.filter((p) => this.exists(p, env));
    return found.length > 0 ? found : null;
  }
}

export function copyEnv(env: ShellEnv): ShellEnv {
  return { vars: new Map(env.vars), cwd: env.cwd, status: env.status, args: [...env.args] };
}
