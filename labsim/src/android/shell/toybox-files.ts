/** toybox's file commands over the device's file tree (ls, mkdir, rm, touch, chmod, cp, mv, stat, checksums, df). */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { absoluteDevicePath } from '../device-fs';
import { CommandContext, CommandFn, errorText } from './interpreter';
import { readAll } from './streams';

/** Options (single letters, `-abc`) and operands; `--` ends the options. */
export function options(args: string[], withValue = ''): { flags: Set<string>; values: Map<string, string>; operands: string[] } {
  const flags = new Set<string>();
  const values = new Map<string, string>();
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (!/^-[A-Za-z0-9]/.test(a)) {
      operands.push(a);
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      if (withValue.includes(a[j])) {
        values.set(a[j], a.slice(j + 1) || args[++i] || '');
        break;
      }
      flags.add(a[j]);
    }
  }
  return { flags, values, operands };
}

/** Runs `fn` per operand; an error prints `name: operand: reason` and makes the status 1. */
function each(ctx: CommandContext, operands: string[], fn: (operand: string) => void): number {
  let status = 0;
  for (const operand of operands) {
    try {
      fn(operand);
    } catch (e) {
      ctx.io.stderr.write(`${ctx.name}: ${operand}: ${errorText(e)}\n`);
      status = 1;
    }
  }
  return status;
}

const host = (ctx: CommandContext, p: string, followLast = true) => ctx.session.host.files.hostPath(p, ctx.env.cwd, followLast);
const writable = (ctx: CommandContext, p: string, followLast = true) => ctx.session.writablePath(p, ctx.env, followLast);

function modeString(st: fs.Stats): string {
  const type = st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : st.isCharacterDevice() ? 'c' : '-';
  const bits = 'rwxrwxrwx'.split('').map((c, i) => (st.mode & (0o400 >> i) ? c : '-')).join('');
  return type + bits;
}

function owner(devicePath: string): string {
  if (devicePath.startsWith('/data/local/tmp')) return 'shell shell';
  if (devicePath.startsWith('/storage/emulated') || devicePath.startsWith('/sdcard')) return 'u0_a0 media_rw';
  return 'root root';
}

function timeString(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 16);
}

const ls: CommandFn = (ctx) => {
  const { flags, operands } = options(ctx.args);
  const long = flags.has('l') || flags.has('n');
  const all = flags.has('a');
  const line = (devicePath: string, name: string, st: fs.Stats) => {
    if (!long) return name;
    let text = `${modeString(st)} ${String(st.isDirectory() ? 2 : 1).padStart(2)} ${owner(devicePath).padEnd(12)} ${String(st.size).padStart(8)} ${timeString(st.mtimeMs)} ${name}`;
    if (st.isSymbolicLink()) text += ` -> ${fs.readlinkSync(host(ctx, devicePath, false))}`;
    return text;
  };
  const targets = operands.length > 0 ? operands : ['.'];
  const out: string[] = [];
  const status = each(ctx, targets, (operand) => {
    const p = absoluteDevicePath(operand, ctx.env.cwd);
    const st = fs.statSync(host(ctx, p));
    if (!st.isDirectory() || flags.has('d')) {
      out.push(line(p, operand, fs.lstatSync(host(ctx, p, false))));
      return;
    }
    if (targets.length > 1) out.push(`${out.length > 0 ? '\n' : ''}${operand}:`);
    const dir = host(ctx, p);
    const names = fs.readdirSync(dir).filter((n) => all || flags.has('A') || !n.startsWith('.')).sort();
    if (long) out.push(`total ${names.length * 8}`);
    if (all) names.unshift('.', '..');
    for (const name of names) out.push(line(`${p === '/' ? '' : p}/${name}`, name, fs.lstatSync(path.join(dir, name))));
  });
  if (out.length > 0) ctx.io.stdout.write(out.join('\n') + '\n');
  return status;
};

const mkdir: CommandFn = (ctx) => {
  const { flags, operands } = options(ctx.args, 'm');
  return each(ctx, operands, (p) => {
    // -p leaves an existing directory alone, wherever it is.
    if (flags.has('p') && fs.statSync(host(ctx, p), { throwIfNoEntry: false })?.isDirectory()) return;
    const target = writable(ctx, p);
    if (flags.has('p')) fs.mkdirSync(target, { recursive: true });
    else fs.mkdirSync(target);
  });
};

const rm: CommandFn = (ctx) => {
  const { flags, operands } = options(ctx.args);
  return each(ctx, operands, (p) => {
    const target = writable(ctx, p, false);
    const st = fs.lstatSync(target, { throwIfNoEntry: false });
    if (!st) {
      if (flags.has('f')) return;
      throw Object.assign(new Error(), { code: 'ENOENT' });
    }
    if (st.isDirectory() && !flags.has('r') && !flags.has('R')) throw Object.assign(new Error(), { code: 'EISDIR' });
    fs.rmSync(target, { recursive: true, force: true });
  });
};

const rmdir: CommandFn = (ctx) => each(ctx, options(ctx.args).operands, (p) => fs.rmdirSync(writable(ctx, p)));

const touch: CommandFn = (ctx) => each(ctx, options(ctx.args, 'dtr').operands, (p) => {
  const target = writable(ctx, p);
  const now = new Date();
  if (fs.existsSync(target)) fs.utimesSync(target, now, now);
  else fs.closeSync(fs.openSync(target, 'a', 0o666));
});

const chmod: CommandFn = (ctx) => {
  const [mode, ...files] = ctx.args.filter((a) => a !== '-R');
  if (!/^[0-7]{1,4}$/.test(mode ?? '')) {
    ctx.io.stderr.write(`chmod: ${mode ?? ''}: bad mode\n`);
    return 1;
  }
  return each(ctx, files, (p) => fs.chmodSync(writable(ctx, p), parseInt(mode, 8)));
};

/** cp and mv: one source to a target, or several into a directory. */
function copyOrMove(move: boolean): CommandFn {
  return (ctx) => {
    const { flags, operands } = options(ctx.args);
    if (operands.length < 2) {
      ctx.io.stderr.write(`${ctx.name}: needs 2 arguments\n`);
      return 1;
    }
    const target = operands.pop()!;
    const targetHost = writable(ctx, target);
    const intoDir = fs.statSync(targetHost, { throwIfNoEntry: false })?.isDirectory() ?? false;
    return each(ctx, operands, (source) => {
      const from = move ? writable(ctx, source, false) : host(ctx, source);
      const to = intoDir ? path.join(targetHost, path.posix.basename(source)) : targetHost;
      if (!move) ctx.session.reserveSpace(to, treeSize(from));
      if (move) fs.renameSync(from, to);
      else if (fs.statSync(from).isDirectory()) {
        if (!flags.has('r') && !flags.has('R') && !flags.has('a')) throw Object.assign(new Error(), { code: 'EISDIR' });
        copyTree(from, to);
      } else fs.copyFileSync(from, to);
    });
  };
}

function treeSize(hostPath: string): number {
  const st = fs.lstatSync(hostPath);
  return st.isDirectory() ? fs.readdirSync(hostPath).reduce((sum, n) => sum + treeSize(path.join(hostPath, n)), 0) : st.size;
}

/** Copies a directory; links are copied as links (their targets are device paths). */
function copyTree(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const a = path.join(from, entry.name);
    const b = path.join(to, entry.name);
    if (entry.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(a), b);
    else if (entry.isDirectory()) copyTree(a, b);
    else fs.copyFileSync(a, b);
  }
}

const stat: CommandFn = (ctx) => {
  const { flags, values, operands } = options(ctx.args, 'c');
  const format = values.get('c');
  return each(ctx, operands, (p) => {
    const st = (flags.has('L') ? fs.statSync : fs.lstatSync)(host(ctx, p, flags.has('L')));
    const fields: Record<string, string> = {
      n: p, s: String(st.size), a: (st.mode & 0o777).toString(8), A: modeString(st), F: st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'symbolic link' : 'regular file',
      Y: String(Math.floor(st.mtimeMs / 1000)), y: new Date(st.mtimeMs).toISOString(), u: '2000', U: 'shell', g: '2000', G: 'shell', i: String(st.ino), b: String(st.blocks), h: String(st.nlink),
    };
    if (format !== undefined) ctx.io.stdout.write(format.replace(/%([a-zA-Z%])/g, (_m, f: string) => (f === '%' ? '%' : fields[f] ?? `%${f}`)) + '\n');
    else ctx.io.stdout.write(`  File: ${p}\n  Size: ${st.size}\t Blocks: ${st.blocks}\t IO Blocks: 4096\t${fields.F}\nAccess: (0${fields.a}/${fields.A})\nModify: ${fields.y}\n`);
  });
};

function checksum(algorithm: string): CommandFn {
  return async (ctx) => {
    const { operands } = options(ctx.args);
    if (operands.length === 0) {
      ctx.io.stdout.write(`${createHash(algorithm).update(await readAll(ctx.io.stdin, Number.MAX_SAFE_INTEGER)).digest('hex')}  -\n`);
      return 0;
    }
    return each(ctx, operands, (p) => ctx.io.stdout.write(`${createHash(algorithm).update(fs.readFileSync(host(ctx, p))).digest('hex')}  ${p}\n`));
  };
}

/** toybox `df`: 1K blocks of the file system holding each path (the folder's real file system). */
const df: CommandFn = (ctx) => {
  const operands = options(ctx.args).operands;
  const rows = ['Filesystem        1K-blocks     Used Available Use% Mounted on'];
  const status = each(ctx, operands.length > 0 ? operands : ['/data'], (p) => {
    const s = fs.statfsSync(host(ctx, p));
    const k = s.bsize / 1024;
    const total = Math.round(s.blocks * k);
    const used = Math.round((s.blocks - s.bfree) * k);
    const avail = Math.round(s.bavail * k);
    const pct = used + avail > 0 ? Math.ceil((used * 100) / (used + avail)) : 0;
    const mount = '/' + (absoluteDevicePath(p, ctx.env.cwd).split('/').filter(Boolean)[0] ?? '');
    rows.push(`/dev/block/dm-${mount === '/data' ? 48 : 6} ${String(total).padStart(14)} ${String(used).padStart(8)} ${String(avail).padStart(9)} ${String(pct).padStart(3)}% ${mount}`);
  });
  ctx.io.stdout.write(rows.join('\n') + '\n');
  return status;
};

const readlink: CommandFn = (ctx) => {
  const { flags, operands } = options(ctx.args);
  return each(ctx, operands, (p) => {
    if (flags.has('f') || flags.has('e') || ctx.name === 'realpath') ctx.io.stdout.write(ctx.session.host.files.devicePath(host(ctx, p)) + '\n');
    else ctx.io.stdout.write(fs.readlinkSync(host(ctx, p, false)) + '\n');
  });
};

export const FILE_COMMANDS: Record<string, CommandFn> = {
  ls, mkdir, rm, rmdir, touch, chmod, cp: copyOrMove(false), mv: copyOrMove(true), stat, df, readlink, realpath: readlink,
  md5sum: checksum('md5'), sha1sum: checksum('sha1'), sha256sum: checksum('sha256'),
};
