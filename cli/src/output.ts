/**
 * What `devicelab` writes: results on stdout (a table, plain lines, or with --json exactly one JSON document),
 * diagnostics and progress on stderr. A progress line is redrawn in place only on a terminal; elsewhere (CI logs)
 * it is printed as plain lines, at most every 10 s, and never coloured.
 */
export interface Style {
  tty: boolean;
  colour: boolean;
}

export type Cell = string | number | boolean | null | undefined;

export class Output {
  private progressShown = false;
  private lastPlainProgress = 0;
  private lastPlainText = '';

  constructor(readonly json: boolean, readonly style: Style) {}

  /** The command's one JSON document (with --json) or its text. */
  result(value: unknown, text: () => string): void {
    process.stdout.write(this.json ? `${JSON.stringify(value, null, 2)}\n` : ensureNewline(text()));
  }

  /** A diagnostic for the user (never on stdout). */
  note(message: string): void {
    this.clearProgress();
    process.stderr.write(`${this.dim('devicelab:')} ${message}\n`);
  }

  warn(message: string): void {
    this.clearProgress();
    process.stderr.write(`${this.paint('33', 'devicelab: warning:')} ${message}\n`);
  }

  error(message: string): void {
    this.clearProgress();
    process.stderr.write(`${this.paint('31', 'devicelab: error:')} ${message}\n`);
  }

  /** Redraws the progress line (terminal), or prints it when it changed and 10 s have passed (logs). */
  progress(text: string, force = false): void {
    if (this.style.tty) {
      const width = (process.stderr.columns || 80) - 1;
      process.stderr.write(`\r\x1b[2K${text.length > width ? text.slice(0, width) : text}`);
      this.progressShown = true;
      return;
    }
    const now = Date.now();
    if (force || (text !== this.lastPlainText && now - this.lastPlainProgress >= 10_000)) {
      process.stderr.write(`devicelab: ${text}\n`);
      this.lastPlainProgress = now;
      this.lastPlainText = text;
    }
  }

  clearProgress(): void {
    if (this.progressShown) process.stderr.write('\r\x1b[2K');
    this.progressShown = false;
  }

  paint(code: string, text: string): string {
    return this.style.colour ? `\x1b[${code}m${text}\x1b[0m` : text;
  }

  private dim(text: string): string {
    return this.paint('2', text);
  }
}

/** Columns padded to their widest cell; `-` for an empty one. */
export function table(headers: string[], rows: Cell[][]): string {
  const cells = rows.map((row) => row.map((cell) => (cell === undefined || cell === null || cell === '' ? '-' : String(cell))));
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((row) => row[i]?.length ?? 0)));
  const line = (row: string[]) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ');
  return [line(headers), ...cells.map(line)].join('\n') + '\n';
}

function ensureNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

/** `1.5 MiB` style sizes (powers of 1024, named as such); whole bytes below 1 KiB. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

/** `1:05` / `1:02:05` for elapsed times. */
export function formatElapsed(ms: number): string {
  const total = Math.floor(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** Durations as users write them: `90` (seconds), `30s`, `10m`, `1h30m`, `2h`. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(trimmed);
  if (!match || trimmed === '') return undefined;
  const [, h = '0', m = '0', s = '0'] = match;
  return ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1000;
}
