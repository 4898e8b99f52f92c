/**
 * A live screen viewer's WebSocket joined to its screen tunnel: each screen message (shared/screen-protocol.ts)
 * is one TunnelFrame one way and one binary WebSocket message the other. Frames to a viewer that reads slowly are
 * not queued: while two frames are still on their way into the viewer's socket, each new one replaces the one
 * waiting, so a slow viewer sees the newest frame late rather than a growing backlog. What a viewer sends is read
 * as input with limits (size, kind, rate); a view-only viewer's input is dropped here too (the gateway drops it
 * as well), and anything unreadable is dropped.
 */
import type WebSocket from 'ws';
import { encodeScreenControl, isControlInput, isScreenFrame, parseScreenInput } from '@devicelab/shared';
import { abortTunnel, type DeviceTunnel } from '../gateways/gateway-directory';

/** Frames handed to the socket and not yet written out, beyond which newer frames replace the waiting one. */
const FRAMES_IN_FLIGHT = 2;
/** Inputs a viewer may send per second; more are dropped (a touch drag sends one per pointer move). */
const INPUTS_PER_SECOND = 200;
/** A client that has not answered the close frame by then is cut. */
const CLOSE_GRACE_MS = 250;

/** Frames relayed and frames replaced by a newer one before a slow viewer took them, since start (hub metrics). */
export const screenRelayCounts = { framesSent: 0, framesDropped: 0 };

export interface ScreenRelay {
  /** Ends the viewer with a reason it is told. */
  end(reason: string): void;
}

export function relayScreen(
  ws: WebSocket, tunnel: DeviceTunnel, viewOnly: boolean, onClosed: () => void, onControl: () => void = () => undefined,
): ScreenRelay {
  let inFlight = 0;
  let waiting: Buffer | undefined;
  let closed = false;
  let windowStart = Date.now();
  let inputs = 0;

  const sendFrame = (message: Buffer) => {
    if (ws.readyState !== ws.OPEN) return;
    if (inFlight >= FRAMES_IN_FLIGHT) {
      if (waiting) screenRelayCounts.framesDropped++;
      waiting = message;
      return;
    }
    inFlight++;
    screenRelayCounts.framesSent++;
    ws.send(message, { binary: true }, () => {
      inFlight--;
      const next = waiting;
      waiting = undefined;
      if (next) sendFrame(next);
    });
  };

  const close = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    waiting = undefined;
    tunnel.end();
    setTimeout(() => abortTunnel(tunnel), CLOSE_GRACE_MS).unref();
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason.slice(0, 120));
    setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
    onClosed();
  };

  tunnel.on('data', (frame) => {
    const data = frame.data;
    if (!data || data.length === 0 || closed) return;
    if (isScreenFrame(data)) sendFrame(data);
    else if (ws.readyState === ws.OPEN) ws.send(data, { binary: true });
  });
  tunnel.on('end', () => close(1000, 'The screen ended.'));
  tunnel.on('close', () => close(1000, 'The screen ended.'));
  tunnel.on('error', () => close(1011, 'The screen connection failed.'));
  tunnel.resume();

  ws.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
    if (!isBinary || closed) return;
    const message = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    const input = parseScreenInput(message);
    if (!input || (viewOnly && isControlInput(input))) return;
    const now = Date.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      inputs = 0;
    }
    if (++inputs > INPUTS_PER_SECOND) return;
    if (isControlInput(input)) onControl();
    if (!tunnel.write({ data: message })) {
      ws.pause();
      tunnel.once('drain', () => ws.resume());
    }
  });
  ws.on('close', () => close(1000, 'The viewer left.'));
  ws.on('error', () => close(1011, 'The viewer\'s connection failed.'));

  return {
    end(reason) {
      if (ws.readyState === ws.OPEN) ws.send(encodeScreenControl({ t: 'error', message: reason }), { binary: true });
      close(1000, reason);
    },
  };
}
