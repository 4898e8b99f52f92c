/** toybox's text commands: they read files or their input (cat, head, tail, wc, grep, tr, sort, cut, ...). */
import { CommandContext, CommandFn, MAX_TEXT, errorText } from './interpreter';
import { options } from './toybox-files';
import { Input, readAll, readLines } from './streams';

/** The inputs named by the operands (`-` or none: the command's input), each opened when its turn comes. */
async function* inputs(ctx: CommandContext, operands: string[]): AsyncGenerator<Input> {
  for (const operand of operands.length > 0 ? operands : ['-']) {
    if (operand === '-') {
      yield ctx.io.stdin;
      continue;
    }
    let input: Input;
    try {
      input = ctx.session.openInput(operand, ctx.env);
    } catch (e) {
      ctx.io.stderr.write(`${ctx.name}: ${operand}: ${errorText(e)}\n`);
      continue;
    }
    yield input;
  }
}

/** The status an operand list ends with: 1 when one could not be opened. */
function failedAny(ctx: CommandContext, operands: string[]): number {
  return operands.some((o) => o !== '-' && (() => {
    try {
      ctx.session.openInput(o, ctx.env).close();
      return false;
    } catch {
      return true;
    }
  })()) ? 1 : 0;
}

async function text(ctx: CommandContext, operands: string[]): Promise<string> {
  const parts: Buffer[] = [];
  for await (const input of inputs(ctx, operands)) parts.push(await readAll(input, MAX_TEXT));
  return Buffer.concat(parts).toString('utf8');
}

function lines(s: string): string[] {
  const all = s.split('\n');
  if (all[all.length - 1] === '') all.pop();
  return all;
}

const cat: CommandFn = async (ctx) => {
  const { operands } = options(ctx.args);
  for await (const input of inputs(ctx, operands)) {
    for (let chunk = await input.read(); chunk; chunk = await input.read()) {
      ctx.io.stdout.write(chunk);
      await ctx.io.stdout.drain();
    }
  }
  return failedAny(ctx, operands);
};

const head: CommandFn = async (ctx) => {
  const args = ctx.args.map((a) => (/^-\d+$/.test(a) ? `-n${a.slice(1)}` : a));
  const { values, operands } = options(args, 'nc');
  const bytes = values.has('c') ? Number(values.get('c')) : undefined;
  for await (const input of inputs(ctx, operands)) {
    let left = bytes ?? Number(values.get('n') ?? 10);
    if (bytes !== undefined) {
      for (let chunk = left > 0 ? await input.read() : null; chunk; chunk = left > 0 ? await input.read() : null) {
        ctx.io.stdout.write(chunk.subarray(0, left));
        left -= Math.min(left, chunk.length);
        await ctx.io.stdout.drain();
      }
    } else if (left > 0) {
      for await (const line of readLines(input)) {
        ctx.io.stdout.write(line);
        if (--left <= 0) break;
      }
    }
    input.close();
  }
  return failedAny(ctx, operands);
};

const tail: CommandFn = async (ctx) => {
  const args = ctx.args.map((a) => (/^-\d+$/.test(a) ? `-n${a.slice(1)}` : a));
  const { values, operands } = options(args, 'nc');
  const all = await text(ctx, operands);
  if (values.has('c')) ctx.io.stdout.write(Buffer.from(all).subarray(-Number(values.get('c')) || Infinity));
  else {
    const n = values.get('n') ?? '10';
    const kept = n.startsWith('+') ? lines(all).slice(Number(n.slice(1)) - 1) : lines(all).slice(-Number(n) || Infinity);
    if (kept.length > 0 && Number(n) !== 0) ctx.io.stdout.write(kept.join('\n') + '\n');
  }
  return failedAny(ctx, operands);
};

const wc: CommandFn = async (ctx) => {
  const { flags, operands } = options(ctx.args);
  const rows: string[] = [];
  const count = (s: Buffer, name: string) => {
    const asText = s.toString('utf8');
    const counts = { l: (asText.match(/\n/g) ?? []).length, w: asText.split(/\s+/).filter(Boolean).length, c: s.length };
    const chosen = flags.size > 0 ? (['l', 'w', 'c'] as const).filter((f) => flags.has(f)) : (['l', 'w', 'c'] as const);
    const numbers = chosen.map((f) => String(counts[f]));
    rows.push(chosen.length === 1 && !name ? numbers[0] : [...numbers.map((n) => n.padStart(chosen.length === 1 ? 0 : 7)), name].join(' ').trim());
  };
  if (operands.length === 0) count(await readAll(ctx.io.stdin, Number.MAX_SAFE_INTEGER), '');
  for (const operand of operands) {
    for await (const input of inputs(ctx, [operand])) count(await readAll(input, Number.MAX_SAFE_INTEGER), operand);
  }
  ctx.io.stdout.write(rows.map((r) => r + '\n').join(''));
  return failedAny(ctx, operands);
};

const grep: CommandFn = async (ctx) => {
  let extended = false, fixed = false, invert = false, quiet = false, ignoreCase = false, countOnly = false, numbers = false, onlyMatching = false, word = false;
  const patterns: string[] = [];
  const files: string[] = [];
  for (let i = 0; i < ctx.args.length; i++) {
    const a = ctx.args[i];
    if (a === '-e') patterns.push(ctx.args[++i] ?? '');
    else if (/^-[EFviqcnowsH]+$/.test(a)) {
      extended ||= a.includes('E'); fixed ||= a.includes('F'); invert ||= a.includes('v'); quiet ||= a.includes('q');
      ignoreCase ||= a.includes('i'); countOnly ||= a.includes('c'); numbers ||= a.includes('n'); onlyMatching ||= a.includes('o'); word ||= a.includes('w');
    } else if (patterns.length === 0 && files.length === 0 && !ctx.args.includes('-e')) patterns.push(a);
    else files.push(a);
  }
  let re: RegExp;
  try {
    const sources = patterns.map((p) => {
      if (fixed) return p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      // Basic regular expressions: \( \) \| \{ \} \+ \? are the operators, the bare characters literal.
      return extended ? p : p.replace(/\\([(){}|+?])|([(){}|+?])/g, (_m, op?: string, lit?: string) => (op ? op : `\\${lit}`));
    });
    if (sources.some(backtracks)) throw new Error('pattern too complex');
    re = new RegExp(sources.map((s) => (word ? `\\b(?:${s})\\b` : `(?:${s})`)).join('|'), ignoreCase ? 'gi' : 'g');
  } catch (e) {
    ctx.io.stderr.write(`grep: ${(e as Error).message}\n`);
    return 2;
  }
  let matched = 0;
  for await (const input of inputs(ctx, files)) {
    let n = 0;
    for await (const raw of readLines(input)) {
      const line = raw.replace(/\n$/, '');
      n++;
      re.lastIndex = 0;
      if (re.test(line) === invert) continue;
      matched++;
      if (quiet) {
        input.close();
        return 0;
      }
      if (countOnly) continue;
      const prefix = (files.length > 1 ? `${files[0]}:` : '') + (numbers ? `${n}:` : '');
      if (onlyMatching && !invert) for (const m of line.match(re) ?? []) ctx.io.stdout.write(`${prefix}${m}\n`);
      else ctx.io.stdout.write(`${prefix}${line}\n`);
    }
  }
  if (countOnly) ctx.io.stdout.write(`${matched}\n`);
  return failedAny(ctx, files) ? 2 : matched > 0 ? 0 : 1;
};

/**
 * A repeated group that itself repeats or alternates (`(a+)+`, `(a|aa)*`): JavaScript's engine may take
 * exponential time on such a pattern, and the whole simulator shares one thread.
 */
export function backtracks(pattern: string): boolean {
  return /\((?:[^()\\]|\\.)*[+*|}](?:[^()\\]|\\.)*\)[+*{?]/.test(pattern) || /\\[1-9]/.test(pattern);
}

/** tr's character sets: ranges (a-z) and escapes (\n, \0, \\, octal). */
function charSet(spec: string): string[] {
  const chars: string[] = [];
  for (let i = 0; i < spec.length; i++) {
    let c = spec[i];
    if (c === '\\' && i + 1 < spec.length) {
      const oct = /^[0-7]{1,3}/.exec(spec.slice(i + 1));
      if (oct) {
        c = String.fromCharCode(parseInt(oct[0], 8));
        i += oct[0].length;
      } else c = ({ n: '\n', t: '\t', r: '\r', '\\': '\\' } as Record<string, string>)[spec[++i]] ?? spec[i];
    }
    if (spec[i + 1] === '-' && i + 2 < spec.length) {
      const end = spec.charCodeAt(i + 2);
      for (let code = c.charCodeAt(0); code <= end; code++) chars.push(String.fromCharCode(code));
      i += 2;
    } else chars.push(c);
  }
  return chars;
}

const tr: CommandFn = async (ctx) => {
  const { flags, operands } = options(ctx.args);
  const from = charSet(operands[0] ?? '');
  const to = charSet(operands[1] ?? '');
  const map = new Map<string, string>();
  from.forEach((c, i) => map.set(c, flags.has('d') ? '' : to[Math.min(i, to.length - 1)] ?? c));
  for (let chunk = await ctx.io.stdin.read(); chunk; chunk = await ctx.io.stdin.read()) {
    ctx.io.stdout.write(Buffer.from(Array.from(chunk.toString('latin1'), (c) => map.get(c) ?? c).join(''), 'latin1'));
    await ctx.io.stdout.drain();
  }
  return 0;
};

const sort: CommandFn = async (ctx) => {
  const { flags, operands } = options(ctx.args);
  let all = lines(await text(ctx, operands));
  all.sort(flags.has('n') ? (a, b) => parseFloat(a) - parseFloat(b) || (a < b ? -1 : a > b ? 1 : 0) : undefined);
  if (flags.has('r')) all.reverse();
  if (flags.has('u')) all = all.filter((l, i) => i === 0 || l !== all[i - 1]);
  if (all.length > 0) ctx.io.stdout.write(all.join('\n') + '\n');
  return failedAny(ctx, operands);
};

const uniq: CommandFn = async (ctx) => {
  const all = lines(await text(ctx, options(ctx.args).operands));
  const kept = all.filter((l, i) => i === 0 || l !== all[i - 1]);
  if (kept.length > 0) ctx.io.stdout.write(kept.join('\n') + '\n');
  return 0;
};

const cut: CommandFn = async (ctx) => {
  const { values, operands } = options(ctx.args, 'dfc');
  const delimiter = values.get('d') ?? '\t';
  const pick = (values.get('f') ?? values.get('c') ?? '1').split(',').flatMap((r) => {
    const [a, b] = r.split('-');
    const start = Number(a || 1);
    const end = r.includes('-') ? (b ? Number(b) : 10_000) : start;
    return Array.from({ length: Math.max(0, Math.min(end, 10_000) - start + 1) }, (_, k) => start + k - 1);
  });
  const out = lines(await text(ctx, operands)).map((l) => {
    if (values.has('c')) return pick.map((k) => l[k] ?? '').join('');
    const fields = l.split(delimiter);
    return fields.length === 1 ? l : pick.filter((k) => k < fields.length).map((k) => fields[k]).join(delimiter);
  });
  if (out.length > 0) ctx.io.stdout.write(out.join('\n') + '\n');
  return failedAny(ctx, operands);
};

/** Backslash escapes of echo and printf; `\c` ends the output there (`stop`). */
function escapes(s: string): { text: string; stop: boolean } {
  const cut = s.search(/\\c/);
  const text = (cut >= 0 ? s.slice(0, cut) : s).replace(/\\(0[0-7]{0,3}|[abefnrtv\\])/g, (_m, e: string) => {
    if (e.startsWith('0')) return String.fromCharCode(parseInt(e.slice(1) || '0', 8));
    return ({ a: '\x07', b: '\b', e: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' } as Record<string, string>)[e];
  });
  return { text, stop: cut >= 0 };
}

const echo: CommandFn = (ctx) => {
  let i = 0;
  let newline = true;
  let interpret = true;
  for (; i < ctx.args.length && /^-[neE]+$/.test(ctx.args[i]); i++) {
    if (ctx.args[i].includes('n')) newline = false;
    if (ctx.args[i].includes('E')) interpret = false;
  }
  const joined = ctx.args.slice(i).join(' ');
  if (!interpret) ctx.io.stdout.write(joined + (newline ? '\n' : ''));
  else {
    const { text: out, stop } = escapes(joined);
    ctx.io.stdout.write(out + (newline && !stop ? '\n' : ''));
  }
  return 0;
};

const printf: CommandFn = (ctx) => {
  const [format = '', ...values] = ctx.args;
  let out = '';
  let next = 0;
  do {
    out += format.replace(/%([-+ 0#]*)(\d*)(?:\.(\d+))?([sdiuxXoc%b])/g, (_m, fl: string, width: string, precision: string | undefined, conv: string) => {
      if (conv === '%') return '%';
      const value = values[next++] ?? '';
      let s: string;
      if (conv === 's') s = precision !== undefined ? value.slice(0, Number(precision)) : value;
      else if (conv === 'b') s = escapes(value).text;
      else if (conv === 'c') s = value.slice(0, 1);
      else {
        const n = Number.parseInt(value, value.startsWith('0x') ? 16 : 10) || 0;
        s = conv === 'x' ? n.toString(16) : conv === 'X' ? n.toString(16).toUpperCase() : conv === 'o' ? n.toString(8) : String(n);
      }
      const w = Number(width || 0);
      return fl.includes('-') ? s.padEnd(w) : s.padStart(w, fl.includes('0') && conv !== 's' ? '0' : ' ');
    });
  } while (next > 0 && next < values.length);
  ctx.io.stdout.write(escapes(out).text);
  return 0;
};

const sleep: CommandFn = async (ctx) => {
  const seconds = Number(ctx.args[0] ?? 0);
  if (!Number.isFinite(seconds) || seconds < 0) {
    ctx.io.stderr.write(`sleep: invalid number '${ctx.args[0]}'\n`);
    return 1;
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([ctx.session.gone, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(seconds, 2 ** 31 / 1000 - 1) * 1000)))]);
  clearTimeout(timer);
  return 0;
};

const basename: CommandFn = (ctx) => {
  const [p = '', suffix] = ctx.args;
  let base = p.replace(/\/+$/, '').split('/').pop() || (p.startsWith('/') ? '/' : '');
  if (suffix && base.endsWith(suffix) && base !== suffix) base = base.slice(0, -suffix.length);
  ctx.io.stdout.write(base + '\n');
  return 0;
};

const dirname: CommandFn = (ctx) => {
  const p = (ctx.args[0] ?? '').replace(/\/+$/, '');
  const i = p.lastIndexOf('/');
  ctx.io.stdout.write((i < 0 ? '.' : i === 0 ? '/' : p.slice(0, i)) + '\n');
  return 0;
};

const seq: CommandFn = async (ctx) => {
  const n = ctx.args.map(Number);
  const [first, step, last] = n.length === 1 ? [1, 1, n[0]] : n.length === 2 ? [n[0], 1, n[1]] : [n[0], n[1], n[2]];
  if (![first, step, last].every(Number.isFinite) || step === 0) return 1;
  for (let v = first; step > 0 ? v <= last : v >= last; v += step) {
    ctx.io.stdout.write(`${v}\n`);
    await ctx.io.stdout.drain();
  }
  return 0;
};

const env: CommandFn = (ctx) => {
  ctx.io.stdout.write([...ctx.env.vars].map(([k, v]) => `${k}=${v}\n`).join(''));
  return 0;
};

export const TEXT_COMMANDS: Record<string, CommandFn> = { cat, head, tail, wc, grep, tr, sort, uniq, cut, echo, printf, sleep, basename, dirname, seq, env, printenv: env };
