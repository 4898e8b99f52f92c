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

  /**
   * Adds one line of the server's output (no line end). A line that is not JSON (Appium's first lines, before its
   * logger is set up; a crash on stderr) is kept as `{"level":"info","message":<the line>}`, so every line reads as JSON.
   */
  add(raw: string): void {
    if (!raw.trim()) return;
    const parsed = parseLine(raw);
    const json = parsed ? raw : JSON.stringify({ level: 'info', message: raw.slice(0, MAX_LOG_LINE_BYTES) });
    const text = json.length > MAX_LOG_LINE_BYTES
      ? JSON.stringify({ ...parsed, message: String(parsed?.message ?? '').slice(0, MAX_LOG_LINE_BYTES / 2), truncated: true })
      : json;
    const line: KeptLine = { text, ...contextOf(parsed) };
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

type AppiumLine = { message?: unknown; context?: { sessionId?: unknown; requestId?: unknown } };

/** The line as Appium's JSON object, or undefined when it is not one. */
function parseLine(text: string): AppiumLine | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed as AppiumLine : undefined;
  } catch {
    return undefined;
  }
}

function contextOf(line: AppiumLine | undefined): { sessionId?: string; requestId?: string } {
  const context = line?.context;
  return {
    sessionId: typeof context?.sessionId === 'string' ? context.sessionId : undefined,
    requestId: typeof context?.requestId === 'string' ? context.requestId : undefined,
  };
}
