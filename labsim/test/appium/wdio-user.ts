/** Drives webdriverio in a child process (wdio-user-process.mjs) as a test's WebDriver user. */
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { createInterface } from 'node:readline';

export class WdioUser {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, (answer: Record<string, unknown>) => void>();
  private nextId = 1;

  constructor() {
    this.child = spawn(process.execPath, [path.join(__dirname, 'wdio-user-process.mjs')], { stdio: ['pipe', 'pipe', 'inherit'], cwd: path.join(__dirname, '..', '..', '..') });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      const answer = JSON.parse(line) as Record<string, unknown>;
      this.waiting.get(answer.id as number)?.(answer);
      this.waiting.delete(answer.id as number);
    });
    this.child.on('exit', () => {
      for (const resolve of this.waiting.values()) resolve({ error: 'the WebDriver user process ended' });
      this.waiting.clear();
    });
  }

  private async call<T>(request: Record<string, unknown>): Promise<T> {
    const id = this.nextId++;
    const answer = await new Promise<Record<string, unknown>>((resolve) => {
      this.waiting.set(id, resolve);
      this.child.stdin!.write(JSON.stringify({ id, ...request }) + '\n');
    });
    if (typeof answer.error === 'string') throw new Error(answer.error);
    return answer as T;
  }

  /** webdriverio's remote() with these options (hostname, port, capabilities ...). */
  session(options: Record<string, unknown>): Promise<{ sessionId: string; capabilities: Record<string, unknown> }> {
    return this.call({ op: 'session', options });
  }

  /** webdriverio's attach(): drives the session `options.sessionId` another client created, at `options`' address. */
  attach(options: Record<string, unknown>): Promise<{ sessionId: string }> {
    return this.call({ op: 'attach', options });
  }

  async browser<T = unknown>(method: string, ...args: unknown[]): Promise<T> {
    return (await this.call<{ value: T }>({ op: 'browser', method, args })).value;
  }

  async element<T = unknown>(selector: string, method: string, ...args: unknown[]): Promise<T> {
    return (await this.call<{ value: T }>({ op: 'element', selector, method, args })).value;
  }

  async count(selector: string): Promise<number> {
    return (await this.call<{ value: number }>({ op: 'elements', selector })).value;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin!.end();
    await exited;
  }
}
