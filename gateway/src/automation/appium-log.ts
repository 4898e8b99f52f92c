/**
 * One device's automation server log: the JSON lines Appium writes with `--log-format json`, kept as written in a
 * ring bounded by bytes (the oldest lines go first). Each line's `context.sessionId` and `context.requestId` are read
 * once, when it arrives, so a session's or a request's lines can be picked out without parsing the ring again.
 */

interface KeptLine {
  text: string;
  sessionId?: string;
  requestId?: string;
}

export interface AppiumLogFilter {
  sessionId?: string;
  requestId?: string;
}

/** A line longer than this is cut (a huge page source in a debug line must not push out a whole session). */
export const MAX_LOG_LINE_BYTES = 64 * 1024;

export class AppiumLog {
  private readonly lines: KeptLine[] = [];
  /** Index of the oldest kept line in `lines` (dropped lines are spliced off in batches). */
  private start = 0;
  private bytes = 0;

  constructor(private readonly budgetBytes: number) {}

  /** Adds one line of the server's output (no line end). Lines that are not Appium's JSON are kept with no context. */
  add(raw: string): void {
    const text = raw.length > MAX_LOG_LINE_BYTES ? raw.slice(0, MAX_LOG_LINE_BYTES) : raw;
    if (!text.trim()) return;
    const line: KeptLine = { text, ...contextOf(text) };
    this.lines.push(line);
    this.bytes += text.length + 1;
    while (this.bytes > this.budgetBytes && this.start < this.lines.length) {
      this.bytes -= this.lines[this.start].text.length + 1;
      this.start++;
    }
    if (this.start > 1024 && this.start * 2 > this.lines.length) {
      this.lines.splice(0, this.start);
      this.start = 0;
    }
  }

  /** The kept lines, oldest first, newline separated: all, or those of the session and/or request named. */
  read(filter: AppiumLogFilter = {}): string {
    const { sessionId, requestId } = filter;
    const picked: string[] = [];
    for (let i = this.start; i < this.lines.length; i++) {
      const line = this.lines[i];
      if (sessionId || requestId) {
        const bySession = sessionId !== undefined && sessionId !== '' && line.sessionId === sessionId;
        const byRequest = requestId !== undefined && requestId !== '' && line.requestId === requestId;
        if (!bySession && !byRequest) continue;
      }
      picked.push(line.text);
    }
    return picked.length ? `${picked.join('\n')}\n` : '';
  }

  get sizeBytes(): number {
    return this.bytes;
  }
}

function contextOf(text: string): { sessionId?: string; requestId?: string } {
  if (!text.startsWith('{')) return {};
  try {
    const parsed = JSON.parse(text) as { context?: { sessionId?: unknown; requestId?: unknown } };
    const context = parsed?.context;
    return {
      sessionId: typeof context?.sessionId === 'string' ? context.sessionId : undefined,
      requestId: typeof context?.requestId === 'string' ? context.requestId : undefined,
    };
  } catch {
    return {};
  }
}
