/**
 * The byte-level side of the simulated Cambrionix CLI: echoes every character it receives, runs a command at
 * `\r` or `\n` (a `\r\n` pair counts once), answers with `\r\n`-terminated lines and the `>> ` prompt,
 * `*Ennn: text` for errors, and ETX (0x03) throws away a half-typed line and gives a fresh prompt.
 */
import { CliError, type CambrionixHubModel } from './hub-model';

const PROMPT = '>> ';

export class CliTerminal {
  private line = '';
  private lastWasCr = false;

  constructor(
    private readonly hub: CambrionixHubModel,
    private readonly output: (text: string) => void,
    /** `reboot`: no answer; the hub resets its USB link. */
    private readonly onReboot: () => void,
  ) {}

  input(chunk: Buffer): void {
    for (const char of chunk.toString('latin1')) {
      if (char === '\x03') {
        this.line = '';
        this.output(`\r\n${PROMPT}`);
        continue;
      }
      if (char === '\n' && this.lastWasCr) {
        this.lastWasCr = false;
        continue;
      }
      this.lastWasCr = char === '\r';
      if (char === '\r' || char === '\n') {
        this.output('\r\n');
        const line = this.line;
        this.line = '';
        this.run(line);
        continue;
      }
      this.line += char;
      this.output(char);
    }
  }

  private run(line: string): void {
    const name = line.trim().split(/\s+/)[0]?.toLowerCase();
    if (name === 'reboot') {
      this.onReboot();
      return;
    }
    let answer: string[];
    try {
      answer = this.hub.execute(line);
    } catch (err) {
      answer = [err instanceof CliError ? `*E${err.code}: ${err.message}` : `*E999: ${String(err)}`];
    }
    this.output(answer.map((text) => `${text}\r\n`).join('') + PROMPT);
  }
}
