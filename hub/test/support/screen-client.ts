/** A live screen viewer over the hub's `/Device/Screen` WebSocket, as a test drives it: what arrived, and input. */
import WebSocket from 'ws';
import { decodeScreenControl, encodeScreenControl, isScreenFrame, type ScreenInput } from '@devicelab/shared';

export interface ScreenClient {
  ws: WebSocket;
  starts: Record<string, unknown>[];
  errors: string[];
  frames: number;
  lastFrame?: Buffer;
  /** When the socket closed (ms since epoch). */
  closedAt?: number;
  opened: Promise<void>;
  send(input: ScreenInput): void;
  close(): void;
}

export function screenUrl(hubUrl: string, query: string): string {
  return `${hubUrl.replace(/^http/, 'ws')}/apiv1/Device/Screen?${query}`;
}

export function openScreen(url: string, headers: Record<string, string>): ScreenClient {
  const ws = new WebSocket(url, { headers, perMessageDeflate: false });
  const client: ScreenClient = {
    ws, starts: [], errors: [], frames: 0,
    opened: new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    }),
    send: (input) => ws.send(encodeScreenControl(input as never)),
    close: () => ws.close(),
  };
  ws.on('message', (data: Buffer) => {
    if (isScreenFrame(data)) {
      client.frames++;
      client.lastFrame = data.subarray(1);
      return;
    }
    const control = decodeScreenControl(data);
    if (control?.t === 'start') client.starts.push(control);
    if (control?.t === 'error') client.errors.push(String(control.message));
  });
  ws.on('close', () => { client.closedAt = Date.now(); });
  ws.on('error', () => undefined);
  return client;
}

export const basic = (who: { login: string; token: string }): Record<string, string> =>
  ({ authorization: `Basic ${Buffer.from(`${who.login}:${who.token}`).toString('base64')}` });
