/**
 * Reads the old-style (NeXTSTEP) property list text `simctl listapps` prints (`{ key = value; }`, `( a, b )`,
 * quoted or bare strings). node-simctl converts it with macOS's `plutil`; the gateway reads it itself so that
 * it needs nothing but xcrun. Data (`<…>`) is kept as its hex text; it is never a value we use.
 */
export type OpenStepValue = string | OpenStepValue[] | { [key: string]: OpenStepValue };

export class OpenStepFormatError extends Error {}

export function parseOpenStep(text: string): OpenStepValue {
  const parser = new Parser(text);
  const value = parser.value();
  parser.skipSpace();
  if (!parser.done()) throw parser.error('unexpected text after the value');
  return value;
}

const BARE = /[A-Za-z0-9_$+/:.\-]/;
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\' };

class Parser {
  private at = 0;

  constructor(private readonly text: string) {}

  done(): boolean {
    return this.at >= this.text.length;
  }

  error(what: string): OpenStepFormatError {
    return new OpenStepFormatError(`listapps output: ${what} at offset ${this.at}`);
  }

  skipSpace(): void {
    while (!this.done()) {
      if (/\s/.test(this.text[this.at])) this.at++;
      else if (this.text.startsWith('//', this.at)) this.at = this.lineEnd();
      else if (this.text.startsWith('/*', this.at)) this.at = this.text.indexOf('*/', this.at) < 0 ? this.text.length : this.text.indexOf('*/', this.at) + 2;
      else return;
    }
  }

  value(): OpenStepValue {
    this.skipSpace();
    const c = this.text[this.at];
    if (c === '{') return this.dict();
    if (c === '(') return this.array();
    if (c === '"') return this.quoted();
    if (c === '<') return this.data();
    if (c !== undefined && BARE.test(c)) return this.bare();
    throw this.error(c === undefined ? 'unexpected end' : `unexpected '${c}'`);
  }

  private dict(): { [key: string]: OpenStepValue } {
    this.at++;
    const dict: { [key: string]: OpenStepValue } = Object.create(null);
    for (;;) {
      this.skipSpace();
      if (this.text[this.at] === '}') { this.at++; return dict; }
      const key = this.value();
      if (typeof key !== 'string') throw this.error('a dictionary key must be a string');
      this.expect('=');
      dict[key] = this.value();
      this.expect(';');
    }
  }

  private array(): OpenStepValue[] {
    this.at++;
    const items: OpenStepValue[] = [];
    for (;;) {
      this.skipSpace();
      if (this.text[this.at] === ')') { this.at++; return items; }
      items.push(this.value());
      this.skipSpace();
      if (this.text[this.at] === ',') this.at++;
      else if (this.text[this.at] !== ')') throw this.error("expected ',' or ')'");
    }
  }

  private quoted(): string {
    let out = '';
    for (this.at++; ; this.at++) {
      const c = this.text[this.at];
      if (c === undefined) throw this.error('unterminated string');
      if (c === '"') { this.at++; return out; }
      if (c === '\\') {
        const next = this.text[++this.at];
        if (next === 'U') {
          out += String.fromCharCode(parseInt(this.text.slice(this.at + 1, this.at + 5), 16));
          this.at += 4;
        } else out += ESCAPES[next] ?? next ?? '';
      } else out += c;
    }
  }

  private bare(): string {
    const start = this.at;
    while (!this.done() && BARE.test(this.text[this.at])) this.at++;
    return this.text.slice(start, this.at);
  }

  private data(): string {
    const end = this.text.indexOf('>', this.at);
    if (end < 0) throw this.error('unterminated data');
    const hex = this.text.slice(this.at + 1, end).replace(/\s/g, '');
    this.at = end + 1;
    return hex;
  }

  private expect(c: string): void {
    this.skipSpace();
    if (this.text[this.at] !== c) throw this.error(`expected '${c}'`);
    this.at++;
  }

  private lineEnd(): number {
    const end = this.text.indexOf('\n', this.at);
    return end < 0 ? this.text.length : end;
  }
}
