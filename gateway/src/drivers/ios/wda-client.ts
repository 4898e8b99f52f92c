/**
 * HTTP to the WebDriverAgent running on a device, over usbmuxd Connect to its port 8100 (as go-ios and iproxy
 * forward it), with no local port in between. JSON requests share kept-alive
 * connections; every WDA answer is `{sessionId, value}`, where `sessionId` is the runner's active session
 * (FBResponseWithStatus) whatever the request named, and a failure is `value: {error, message}` with its status.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';

/** WebDriverAgent's HTTP port on the device (FBWebServer) and its MJPEG server's (FBMjpegServer, mjpegServerPort). */
export const WDA_PORT = 8100;
export const WDA_MJPEG_PORT = 9100;

/** The largest JSON answer read (a base64 PNG screenshot of an iPad's full resolution stays below). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

export interface WdaAnswer {
  status: number;
  /** The runner's active session (null when none). */
  sessionId: string | null;
  value: unknown;
}

export class WdaError extends Error {
  constructor(message: string, readonly status: number, readonly error?: string) {
    super(message);
    this.name = 'WdaError';
  }

  /** WDA no longer knows the session the request named (another client started one, or it ended). */
  get invalidSession(): boolean {
    return this.error === 'invalid session id' || /session does not exist/i.test(this.message);
  }
}

export class WdaClient {
  private readonly agent: http.Agent;

  /** `connect(port)` opens a raw connection to a port of the device (usbmuxd Connect). */
  constructor(private readonly connect: (port: number) => Promise<Duplex>, private readonly timeoutMs: number) {
    // Idle connections are let go after a few seconds: a runner that restarted must not leave a dead one to reuse.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4, timeout: 5_000 });
    // Every connection to WDA is a usbmux Connect to port 8100.
    (agent as unknown as { createConnection: unknown }).createConnection = (_options: unknown, done: (err: Error | null, socket?: Duplex) => void) => {
      this.connect(WDA_PORT).then((socket) => done(null, socket), (err: Error) => done(err));
      return undefined;
    };
    this.agent = agent;
  }

  /** One JSON request; resolves with WDA's answer, rejects with WdaError when WDA answered a failure. */
  async request(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, timeoutMs = this.timeoutMs): Promise<WdaAnswer> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request({
        agent: this.agent, host: '127.0.0.1', port: WDA_PORT, method, path,
        headers: { accept: 'application/json', ...(text !== undefined ? { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) } : {}) },
      }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) return void req.destroy(new Error(`WebDriverAgent answered ${method} ${path} with more than ${MAX_ANSWER_BYTES} bytes`));
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`WebDriverAgent did not answer ${method} ${path} within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(text);
    });
    let parsed: { sessionId?: unknown; value?: unknown };
    try {
      parsed = JSON.parse(answer.text) as typeof parsed;
    } catch {
      throw new WdaError(`WebDriverAgent answered ${method} ${path} with HTTP ${answer.status} and no JSON`, answer.status);
    }
    const value = parsed?.value ?? null;
    const sessionId = typeof parsed?.sessionId === 'string' ? parsed.sessionId : null;
    const failure = value && typeof value === 'object' && typeof (value as { error?: unknown }).error === 'string' ? value as { error: string; message?: unknown } : undefined;
    if (answer.status >= 400 || failure) {
      throw new WdaError(String(failure?.message ?? `HTTP ${answer.status}`).slice(0, 500), answer.status, failure?.error);
    }
    return { status: answer.status, sessionId, value };
  }

  /** Ends the kept connections. */
  close(): void {
    this.agent.destroy();
  }
}
