/** Runs the real `adb` client against a private server (port + HOME). */
import { execFile } from 'node:child_process';

export interface AdbResult {
  stdout: string;
  stderr: string;
  code: number;
}

export class AdbCli {
  constructor(readonly adbPath: string, readonly serverPort: number, readonly home: string) {}

  /** Environment every adb invocation (and the code under test) needs for this server. */
  env(): Record<string, string> {
    return { ANDROID_ADB_SERVER_PORT: String(this.serverPort), HOME: this.home };
  }

  run(args: string[], timeoutMs = 20_000): Promise<AdbResult> {
    return new Promise((resolve) => {
      execFile(
        this.adbPath,
        ['-P', String(this.serverPort), ...args],
        { env: { ...process.env, ...this.env() }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
        (err, stdout, stderr) => {
          const code = err ? (typeof (err as NodeJS.ErrnoException).code === 'number' ? Number((err as NodeJS.ErrnoException).code) : 1) : 0;
          resolve({ stdout, stderr, code });
        },
      );
    });
  }

  /** Parses `adb devices -l` into serial -> { state, attributes }. */
  async devices(): Promise<Map<string, { state: string; attrs: Record<string, string> }>> {
    const r = await this.run(['devices', '-l']);
    const out = new Map<string, { state: string; attrs: Record<string, string> }>();
    for (const line of r.stdout.split('\n').slice(1)) {
      const m = /^(\S+)\s+(\S+)(.*)$/.exec(line.trim());
      if (!m) continue;
      const attrs: Record<string, string> = {};
      for (const kv of m[3].trim().split(/\s+/).filter(Boolean)) {
        const i = kv.indexOf(':');
        if (i > 0) attrs[kv.slice(0, i)] = kv.slice(i + 1);
      }
      out.set(m[1], { state: m[2], attrs });
    }
    return out;
  }
}
