/**
 * One open serial connection to a Cambrionix hub's CLI (testbench.md 2.2): 115200 8N1, commands end with
 * `\r\n`, the hub echoes what it receives, every answer ends with the `>> ` prompt, `*Ennn:` lines are errors,
 * ETX (0x03) cancels a half-typed command and gives a fresh prompt. The hub may become unresponsive when a
 * command is sent before the previous prompt, so commands run strictly one at a time.
 *
 * The session never reopens itself: on any loss (close, write error, EIO after an unplug) it ends and emits
 * `close`; the hub controller decides when to open a new one.
 */
import { EventEmitter } from 'node:events';
import { SerialPort } from 'serialport';
import { parseErrorLine } from './cli-parsers';
import { UsbHubError } from '../usb-hub-controller';

const PROMPT = '>> ';
const ETX = '\x03';

interface CliSessionOptions {
  path: string;
  baudRate?: number;
  /** How long one command may take before it is cancelled with ETX. */
  commandTimeoutMs?: number;
}

/** The hub answered with `*Ennn: text`. */
export class CambrionixCommandError extends UsbHubError {
  constructor(readonly command: string, code: string, readonly text: string) {
    super(`The hub refused '${command}': ${code}: ${text}`, code);
    this.name = 'CambrionixCommandError';
  }
}

export class CliSession extends EventEmitter {
  private readonly port: SerialPort;
  private received = '';
  private waiter: (() => void) | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private ended: string | undefined;
  /** Set after a timeout: the next command first cancels whatever is half-done. */
  private needsResync = true;
  private readonly commandTimeoutMs: number;

  private constructor(port: SerialPort, options: CliSessionOptions) {
    super();
    this.port = port;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 3_000;
    port.on('data', (chunk: Buffer) => {
      this.received += chunk.toString('latin1');
      this.waiter?.();
    });
    port.on('error', (err: Error) => this.end(`serial error: ${err.message}`));
    port.on('close', () => this.end('serial port closed'));
  }

  /** Opens the port (exclusively; a second opener gets `Cannot lock port`). */
  static open(options: CliSessionOptions): Promise<CliSession> {
    return new Promise((resolve, reject) => {
      const port = new SerialPort({
        path: options.path, baudRate: options.baudRate ?? 115_200, dataBits: 8, parity: 'none', stopBits: 1,
        rtscts: false, autoOpen: false,
      });
      port.open((err) => {
        if (err) reject(new UsbHubError(`Cannot open ${options.path}: ${err.message}`));
        else resolve(new CliSession(port, options));
      });
    });
  }

  get isOpen(): boolean {
    return this.ended === undefined;
  }

  /** Runs one command and resolves with its answer lines (echo and prompt removed). */
  command(text: string, timeoutMs = this.commandTimeoutMs): Promise<string[]> {
    const run = this.queue.then(() => this.exchange(text, timeoutMs));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Sends a command that has no answer (`reboot`): the hub resets its USB link, so the port closes.
   * Resolves once the bytes are written.
   */
  sendWithoutAnswer(text: string): Promise<void> {
    const run = this.queue.then(async () => {
      if (this.needsResync) await this.resync(this.commandTimeoutMs);
      await this.write(`${text}\r\n`);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    this.end('closed by the gateway');
    if (!this.port.isOpen) return;
    await new Promise<void>((resolve) => this.port.close(() => resolve()));
  }

  private async exchange(text: string, timeoutMs: number): Promise<string[]> {
    if (this.needsResync) await this.resync(timeoutMs);
    this.received = '';
    await this.write(`${text}\r\n`);
    let raw: string;
    try {
      raw = await this.waitForPrompt(timeoutMs, (buffer) => buffer.endsWith(`\r\n${PROMPT}`));
    } catch (err) {
      this.needsResync = true;
      throw err instanceof UsbHubError && err.code === 'timeout'
        ? new UsbHubError(`The hub did not answer '${text}' within ${timeoutMs} ms`, 'timeout')
        : err;
    }
    const lines = raw.slice(0, -PROMPT.length).split('\r\n');
    lines.pop(); // the empty rest before the prompt
    // The echo is the command line itself (a hub that does not echo sends the answer straight away).
    if (lines.length > 0 && lines[0].trim() === text.trim()) lines.shift();
    for (const line of lines) {
      const error = parseErrorLine(line);
      if (error) throw new CambrionixCommandError(text, error.code, error.text);
    }
    return lines;
  }

  /** ETX cancels any half-typed input; then wait until the hub has been quiet at a prompt. */
  private async resync(timeoutMs: number): Promise<void> {
    this.received = '';
    await this.write(ETX);
    await this.waitForPrompt(timeoutMs, (buffer) => buffer.endsWith(PROMPT));
    // Swallow a second prompt that a hub may print for a `\r\n` pending before the ETX.
    await new Promise((resolve) => setTimeout(resolve, 20));
    this.received = '';
    this.needsResync = false;
  }

  private write(data: string): Promise<void> {
    if (this.ended) return Promise.reject(new UsbHubError(`The hub is not connected (${this.ended})`, 'closed'));
    return new Promise((resolve, reject) => {
      this.port.write(Buffer.from(data, 'latin1'), (err) => {
        if (!err) return resolve();
        this.end(`write failed: ${err.message}`);
        reject(new UsbHubError(`Writing to the hub failed: ${err.message}`, 'closed'));
      });
    });
  }

  private waitForPrompt(timeoutMs: number, done: (buffer: string) => boolean): Promise<string> {
    return new Promise((resolve, reject) => {
      const finish = (err?: Error) => {
        clearTimeout(timer);
        this.waiter = undefined;
        this.off('close', onClose);
        if (err) reject(err);
        else resolve(this.received);
      };
      const onClose = (reason: string) => finish(new UsbHubError(`The hub connection was lost (${reason})`, 'closed'));
      const timer = setTimeout(() => {
        // ETX cancels what the hub is doing; the next command resyncs.
        if (!this.ended) this.port.write(ETX, () => undefined);
        finish(new UsbHubError(`The hub did not answer within ${timeoutMs} ms`, 'timeout'));
      }, timeoutMs);
      this.waiter = () => {
        if (done(this.received)) finish();
      };
      this.once('close', onClose);
      if (this.ended) onClose(this.ended);
      else this.waiter();
    });
  }

  private end(reason: string): void {
    if (this.ended) return;
    this.ended = reason;
    this.emit('close', reason);
    if (this.port.isOpen) this.port.close(() => undefined);
  }
}
