/**
 * Parser for the device shell's language: the POSIX subset that hosts, test tools and people type into
 * `adb shell` (lists, `&&`/`||`, pipes, redirections, quoting, `$var`, `$(...)`, `$((...))`, `if`, `while`,
 * `until`, `for`, `{ }`, `( )`). What it does not know (`case`, functions, here-documents) is a syntax error,
 * as an unsupported construct is on a device whose shell lacks it.
 */

export type Part =
  | { kind: 'text'; text: string; quoted: boolean }
  | { kind: 'param'; name: string; quoted: boolean }
  | { kind: 'command'; body: List; quoted: boolean }
  | { kind: 'arith'; expression: string; quoted: boolean };
export type Word = Part[];

export interface Redirect {
  fd: number;
  op: '>' | '>>' | '<' | '>&' | '<&' | '<>';
  target: Word;
}

export type Node =
  | { kind: 'simple'; assignments: Array<{ name: string; value: Word }>; words: Word[]; redirects: Redirect[] }
  | { kind: 'if'; clauses: Array<{ condition: List; body: List }>; otherwise: List | null; redirects: Redirect[] }
  | { kind: 'loop'; until: boolean; condition: List; body: List; redirects: Redirect[] }
  | { kind: 'for'; name: string; items: Word[] | null; body: List; redirects: Redirect[] }
  | { kind: 'group'; body: List; subshell: boolean; redirects: Redirect[] };

export interface Pipeline { negated: boolean; commands: Node[] }
export interface AndOr { first: Pipeline; rest: Array<{ op: '&&' | '||'; pipeline: Pipeline }>; background: boolean }
export type List = AndOr[];

export class ShellSyntaxError extends Error {}

const LIST_ENDS = new Set(['then', 'else', 'elif', 'fi', 'do', 'done', '}']);
const UNSUPPORTED = new Set(['case', 'esac', 'function', 'select', '[[', 'time', 'coproc']);
const WORD_END = ' \t\n;&|<>()';
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SPECIAL_PARAMS = '?#$!@*-0123456789';

export function parseShell(source: string): List {
  return new Parser(source).script();
}

class Parser {
  private pos = 0;
  constructor(private readonly src: string) {}

  script(): List {
    const list = this.list();
    this.blanks(true);
    if (this.pos < this.src.length) this.unexpected();
    return list;
  }

  private unexpected(): never {
    const c = this.src[this.pos];
    throw new ShellSyntaxError(c === undefined ? 'unexpected EOF' : `'${c === '\n' ? 'newline' : this.peekWord() ?? c}' unexpected`);
  }

  /** Skips blanks, comments and line continuations (and newlines when asked). */
  private blanks(newlines = false): void {
    for (;;) {
      const c = this.src[this.pos];
      if (c === ' ' || c === '\t' || (newlines && c === '\n')) this.pos++;
      else if (c === '\\' && this.src[this.pos + 1] === '\n') this.pos += 2;
      else if (c === '#') while (this.pos < this.src.length && this.src[this.pos] !== '\n') this.pos++;
      else return;
    }
  }

  /** The plain word at the cursor (for keywords), without consuming it. */
  private peekWord(): string | null {
    const m = /^[^\s;&|<>()'"\\$`]+/.exec(this.src.slice(this.pos, this.pos + 64));
    if (!m) return null;
    const next = this.src[this.pos + m[0].length];
    return next === undefined || WORD_END.includes(next) ? m[0] : null;
  }

  private keyword(word: string): boolean {
    this.blanks(true);
    if (this.peekWord() !== word) return false;
    this.pos += word.length;
    return true;
  }

  private expect(word: string): void {
    if (!this.keyword(word)) this.unexpected();
  }

  private list(): List {
    const items: List = [];
    for (;;) {
      this.blanks(true);
      const word = this.peekWord();
      if (this.pos >= this.src.length || this.src[this.pos] === ')' || (word !== null && LIST_ENDS.has(word))) return items;
      const andOr = this.andOr();
      items.push(andOr);
      this.blanks();
      const c = this.src[this.pos];
      if (c === ';' && this.src[this.pos + 1] !== ';') this.pos++;
      else if (c === '&' && this.src[this.pos + 1] !== '&') {
        this.pos++;
        andOr.background = true;
      } else if (c === '\n') this.pos++;
      else return items;
    }
  }

  private andOr(): AndOr {
    const andOr: AndOr = { first: this.pipeline(), rest: [], background: false };
    for (;;) {
      this.blanks();
      const op = this.src.slice(this.pos, this.pos + 2);
      if (op !== '&&' && op !== '||') return andOr;
      this.pos += 2;
      this.blanks(true);
      andOr.rest.push({ op, pipeline: this.pipeline() });
    }
  }

  private pipeline(): Pipeline {
    this.blanks();
    const negated = this.peekWord() === '!';
    if (negated) this.pos++;
    const commands = [this.command()];
    for (;;) {
      this.blanks();
      if (this.src[this.pos] !== '|' || this.src[this.pos + 1] === '|') return { negated, commands };
      this.pos++;
      this.blanks(true);
      commands.push(this.command());
    }
  }

  private command(): Node {
    this.blanks();
    const word = this.peekWord();
    if (word !== null && UNSUPPORTED.has(word)) throw new ShellSyntaxError(`'${word}' unexpected`);
    if (word === 'if') {
      this.pos += 2;
      const clauses: Array<{ condition: List; body: List }> = [];
      let otherwise: List | null = null;
      do {
        const condition = this.nonEmptyList();
        this.expect('then');
        clauses.push({ condition, body: this.nonEmptyList() });
      } while (this.keyword('elif'));
      if (this.keyword('else')) otherwise = this.nonEmptyList();
      this.expect('fi');
      return { kind: 'if', clauses, otherwise, redirects: this.redirects() };
    }
    if (word === 'while' || word === 'until') {
      this.pos += word.length;
      const condition = this.nonEmptyList();
      this.expect('do');
      const body = this.nonEmptyList();
      this.expect('done');
      return { kind: 'loop', until: word === 'until', condition, body, redirects: this.redirects() };
    }
    if (word === 'for') {
      this.pos += 3;
      this.blanks();
      const name = this.peekWord();
      if (name === null || !NAME.test(name)) this.unexpected();
      this.pos += name.length;
      let items: Word[] | null = null;
      if (this.keyword('in')) {
        items = [];
        for (this.blanks(); !';\n'.includes(this.src[this.pos] ?? ';'); this.blanks()) items.push(this.word());
      }
      this.blanks();
      if (this.src[this.pos] === ';') this.pos++;
      this.expect('do');
      const body = this.nonEmptyList();
      this.expect('done');
      return { kind: 'for', name, items, body, redirects: this.redirects() };
    }
    if (word === '{') {
      this.pos++;
      const body = this.nonEmptyList();
      this.expect('}');
      return { kind: 'group', body, subshell: false, redirects: this.redirects() };
    }
    if (this.src[this.pos] === '(') {
      this.pos++;
      const body = this.nonEmptyList();
      this.blanks(true);
      if (this.src[this.pos] !== ')') this.unexpected();
      this.pos++;
      return { kind: 'group', body, subshell: true, redirects: this.redirects() };
    }
    return this.simple();
  }

  private nonEmptyList(): List {
    const list = this.list();
    if (list.length === 0) this.unexpected();
    return list;
  }

  private simple(): Node {
    const node = { kind: 'simple' as const, assignments: [] as Array<{ name: string; value: Word }>, words: [] as Word[], redirects: [] as Redirect[] };
    for (;;) {
      this.blanks();
      const c = this.src[this.pos];
      if (c === undefined || ';&|\n)'.includes(c)) break;
      if (c === '(') this.unexpected();
      const redirect = this.redirect();
      if (redirect) {
        node.redirects.push(redirect);
        continue;
      }
      const word = this.word();
      const first = word[0];
      const eq = first?.kind === 'text' && !first.quoted ? first.text.indexOf('=') : -1;
      if (node.words.length === 0 && eq > 0 && NAME.test((first as { text: string }).text.slice(0, eq))) {
        const text = (first as { text: string }).text;
        const rest = text.slice(eq + 1);
        node.assignments.push({ name: text.slice(0, eq), value: [...(rest ? [{ kind: 'text' as const, text: rest, quoted: false }] : []), ...word.slice(1)] });
      } else node.words.push(word);
    }
    if (node.words.length === 0 && node.assignments.length === 0 && node.redirects.length === 0) this.unexpected();
    return node;
  }

  private redirects(): Redirect[] {
    const found: Redirect[] = [];
    for (let r = (this.blanks(), this.redirect()); r; r = (this.blanks(), this.redirect())) found.push(r);
    return found;
  }

  private redirect(): Redirect | null {
    const m = /^(\d?)(>>|>&|>\||<&|<<|<>|>|<)/.exec(this.src.slice(this.pos, this.pos + 4));
    if (!m) return null;
    if (m[2] === '<<') throw new ShellSyntaxError('here documents are not supported');
    this.pos += m[0].length;
    const op = (m[2] === '>|' ? '>' : m[2]) as Redirect['op'];
    const fd = m[1] ? Number(m[1]) : op.startsWith('<') ? 0 : 1;
    this.blanks();
    const c = this.src[this.pos];
    if (c === undefined || WORD_END.includes(c)) this.unexpected();
    return { fd, op, target: this.word() };
  }

  private word(): Word {
    const parts: Word = [];
    const text = (s: string, quoted: boolean) => {
      const last = parts[parts.length - 1];
      if (last?.kind === 'text' && last.quoted === quoted) last.text += s;
      else parts.push({ kind: 'text', text: s, quoted });
    };
    for (;;) {
      const c = this.src[this.pos];
      if (c === undefined || WORD_END.includes(c)) break;
      if (c === "'") {
        const end = this.src.indexOf("'", this.pos + 1);
        if (end < 0) throw new ShellSyntaxError("no closing quote");
        text(this.src.slice(this.pos + 1, end), true);
        this.pos = end + 1;
      } else if (c === '"') {
        this.pos++;
        parts.push({ kind: 'text', text: '', quoted: true }); // "" is an empty word, not none
        for (;;) {
          const d = this.src[this.pos];
          if (d === undefined) throw new ShellSyntaxError('no closing quote');
          if (d === '"') break;
          if (d === '\\' && '$`"\\\n'.includes(this.src[this.pos + 1] ?? '')) {
            if (this.src[this.pos + 1] !== '\n') text(this.src[this.pos + 1], true);
            this.pos += 2;
          } else if (d === '$' || d === '`') parts.push(this.expansion(true));
          else {
            text(d, true);
            this.pos++;
          }
        }
        this.pos++;
      } else if (c === '\\') {
        const next = this.src[this.pos + 1];
        if (next === undefined) throw new ShellSyntaxError('unexpected EOF');
        if (next !== '\n') text(next, true);
        this.pos += 2;
      } else if (c === '$' || c === '`') parts.push(this.expansion(false));
      else {
        text(c, false);
        this.pos++;
      }
    }
    return parts;
  }

  /** `$name`, `${name}`, `$(...)`, `$((...))` or a backquoted command, at the cursor. */
  private expansion(quoted: boolean): Part {
    const src = this.src;
    if (src[this.pos] === '`') {
      let body = '';
      let i = this.pos + 1;
      for (; i < src.length && src[i] !== '`'; i++) {
        if (src[i] === '\\' && '$`\\'.includes(src[i + 1] ?? '')) i++;
        body += src[i];
      }
      if (i >= src.length) throw new ShellSyntaxError('no closing quote');
      this.pos = i + 1;
      return { kind: 'command', body: parseShell(body), quoted };
    }
    const next = src[this.pos + 1];
    if (next === '(' && src[this.pos + 2] === '(') {
      let depth = 0;
      for (let i = this.pos + 3; i < src.length; i++) {
        if (src[i] === '(') depth++;
        else if (src[i] === ')' && depth > 0) depth--;
        else if (src[i] === ')' && src[i + 1] === ')') {
          const expression = src.slice(this.pos + 3, i);
          this.pos = i + 2;
          return { kind: 'arith', expression, quoted };
        }
      }
      throw new ShellSyntaxError('unexpected EOF');
    }
    if (next === '(') {
      this.pos += 2;
      const body = this.list();
      this.blanks(true);
      if (src[this.pos] !== ')') this.unexpected();
      this.pos++;
      return { kind: 'command', body, quoted };
    }
    if (next === '{') {
      const end = src.indexOf('}', this.pos);
      const name = end < 0 ? '' : src.slice(this.pos + 2, end);
      if (!NAME.test(name) && !(name.length === 1 && SPECIAL_PARAMS.includes(name))) throw new ShellSyntaxError(`\${${name}}: bad substitution`);
      this.pos = end + 1;
      return { kind: 'param', name, quoted };
    }
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(this.pos + 1, this.pos + 257));
    if (m) {
      this.pos += 1 + m[0].length;
      return { kind: 'param', name: m[0], quoted };
    }
    if (next !== undefined && SPECIAL_PARAMS.includes(next)) {
      this.pos += 2;
      return { kind: 'param', name: next, quoted };
    }
    this.pos++;
    return { kind: 'text', text: '$', quoted };
  }
}
