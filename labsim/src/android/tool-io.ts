/** I/O handed to an in-process device tool (pm, am, getprop, ...). */
export interface ToolIO {
  out(data: string | Buffer): void;
  err(data: string): void;
  /** Resolves when the caller went away (stream closed, process killed). */
  readonly gone: Promise<void>;
}

/** Collects a tool's output in memory (for abb_exec and tests). */
export class BufferedToolIO implements ToolIO {
  stdout = '';
  stderr = '';
  readonly gone = new Promise<void>(() => undefined);
  out(data: string | Buffer): void {
    this.stdout += data.toString();
  }
  err(data: string): void {
    this.stderr += data;
  }
}
