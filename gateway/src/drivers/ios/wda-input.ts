/**
 * A viewer's input to an iPhone through WebDriverAgent. Touch arrives as down/move/up of normalised points; a
 * gesture is sent when the finger lifts: one that stayed put is a tap (`/wda/tap`) or, held half a second or more,
 * a long press (`/wda/touchAndHold`); one that moved is a W3C pointer action replaying its path (a swipe or drag).
 * Text goes through `/wda/keys` (any Unicode: WDA types the string as given), Home through the session-less
 * `/wda/homescreen`, the volume keys through `/wda/pressButton`, Enter and Delete as the characters `\n` and
 * `\b` typed. Coordinates are WDA's points: the normalised position times the screen's size in points
 * (`/wda/screen`), i.e. the frame's pixels divided by the screen's scale.
 *
 * Most of these routes need a session, and WDA runs one at a time: a new one ends the old. So input joins the
 * runner's active session when there is one (an Appium session keeps running; its user sees the taps), and only
 * when there is none creates its own (no app, `shouldTerminateApp` off), which it deletes at the end if it is still
 * the active one.
 */
import type { ScreenInput, ScreenKey } from '@devicelab/shared';
import { DeviceCommandError } from '../device-driver';
import { type WdaClient, WdaError } from './wda-client';

/** Keys WDA can press on an iPhone. */
export const WDA_KEYS: readonly ScreenKey[] = ['home', 'volume_up', 'volume_down', 'enter', 'delete'];

/** Points of a moved finger kept for the replay: enough for a curve, bounded whatever a viewer sends. */
const MAX_PATH_POINTS = 32;
const LONG_PRESS_MS = 500;
/** Gestures and keys waiting for WDA; more are refused (a viewer cannot queue work on the device without end). */
const MAX_WAITING = 8;

interface Finger {
  downAt: number;
  path: Array<{ x: number; y: number; at: number }>;
}

export class WdaInput {
  private sessionId: string | undefined;
  /** Whether `sessionId` is one this input created (and so deletes). */
  private own = false;
  private finger: Finger | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  /** `points`: the screen's size in WDA points, upright. */
  constructor(private readonly wda: WdaClient, private readonly points: { width: number; height: number }) {}

  async input(input: ScreenInput): Promise<void> {
    switch (input.t) {
      case 'touch': return this.touch(input);
      case 'key': return this.enqueue(() => this.key(input.key));
      case 'text': return this.enqueue(() => this.inSession((id) => this.wda.request('POST', `/session/${id}/wda/keys`, { value: [...input.text] })));
      case 'rotate': throw new DeviceCommandError('Rotation is not offered on iOS here: the device turns with its own orientation.', 'SCREEN_UNAVAILABLE');
      default: return undefined;
    }
  }

  /** Deletes the session this input created, if it is still WDA's active one. */
  async close(): Promise<void> {
    const id = this.sessionId;
    if (!id || !this.own) return;
    this.sessionId = undefined;
    await this.wda.request('DELETE', `/session/${id}`, undefined, 3_000).catch(() => undefined);
  }

  private touch(input: Extract<ScreenInput, { t: 'touch' }>): Promise<void> | undefined {
    // One finger: WDA's gestures here are single-touch; other contacts are ignored.
    if ((input.c ?? 0) !== 0) return undefined;
    const at = Date.now();
    const point = { x: input.x * this.points.width, y: input.y * this.points.height, at };
    if (input.a === 'd') {
      this.finger = { downAt: at, path: [point] };
      return undefined;
    }
    const finger = this.finger;
    if (!finger) return undefined;
    if (input.a === 'm') {
      if (finger.path.length >= MAX_PATH_POINTS) finger.path.splice(1, 1);
      finger.path.push(point);
      return undefined;
    }
    this.finger = undefined;
    finger.path.push(point);
    return this.enqueue(() => this.gesture(finger));
  }

  private async gesture(finger: Finger): Promise<void> {
    const first = finger.path[0];
    const last = finger.path[finger.path.length - 1];
    const moved = finger.path.some((p) => Math.abs(p.x - first.x) >= 10 || Math.abs(p.y - first.y) >= 10);
    const heldMs = last.at - finger.downAt;
    const x = Math.round(first.x), y = Math.round(first.y);
    if (!moved && heldMs < LONG_PRESS_MS) {
      await this.inSession((id) => this.wda.request('POST', `/session/${id}/wda/tap`, { x, y }));
    } else if (!moved) {
      await this.inSession((id) => this.wda.request('POST', `/session/${id}/wda/touchAndHold`, { x, y, duration: Math.min(heldMs, 10_000) / 1000 }));
    } else {
      await this.inSession((id) => this.wda.request('POST', `/session/${id}/actions`, { actions: [pointerPath(finger)] }, 30_000));
    }
  }

  private async key(key: ScreenKey): Promise<void> {
    switch (key) {
      case 'home':
        await this.wda.request('POST', '/wda/homescreen', {});
        return;
      case 'volume_up':
      case 'volume_down':
        await this.inSession((id) => this.wda.request('POST', `/session/${id}/wda/pressButton`, { name: key === 'volume_up' ? 'volumeUp' : 'volumeDown' }));
        return;
      case 'enter':
      case 'delete':
        await this.inSession((id) => this.wda.request('POST', `/session/${id}/wda/keys`, { value: [key === 'enter' ? '\n' : '\b'] }));
        return;
      default:
        throw new DeviceCommandError(`An iPhone has no ${key.replace('_', ' ')} key (WebDriverAgent offers ${WDA_KEYS.join(', ')}).`, 'SCREEN_UNAVAILABLE');
    }
  }

  /** Runs one request in WDA's active session, joining or creating one; once more in a new one when it ended meanwhile. */
  private async inSession(run: (sessionId: string) => Promise<unknown>): Promise<void> {
    const id = await this.session();
    try {
      await run(id);
    } catch (err) {
      if (!(err instanceof WdaError) || !err.invalidSession) throw err;
      if (this.sessionId === id) this.sessionId = undefined;
      await run(await this.session());
    }
  }

  private async session(): Promise<string> {
    if (this.sessionId) return this.sessionId;
    const status = await this.wda.request('GET', '/status');
    if (status.sessionId) {
      this.sessionId = status.sessionId;
      this.own = false;
      return status.sessionId;
    }
    const created = await this.wda.request('POST', '/session', { capabilities: { alwaysMatch: { shouldTerminateApp: false }, firstMatch: [{}] } }, 60_000);
    const value = created.value as { sessionId?: unknown } | null;
    const id = typeof value?.sessionId === 'string' ? value.sessionId : created.sessionId;
    if (!id) throw new DeviceCommandError('WebDriverAgent created no session for the input', 'SCREEN_UNAVAILABLE');
    this.sessionId = id;
    this.own = true;
    return id;
  }

  /** One request to WDA at a time, in the order the viewer gave them. */
  private enqueue(work: () => Promise<void>): Promise<void> {
    if (this.waiting >= MAX_WAITING) return Promise.reject(new DeviceCommandError('The device is still busy with earlier input', 'SCREEN_UNAVAILABLE'));
    this.waiting++;
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined).finally(() => { this.waiting--; });
    return run;
  }
}

/** A W3C touch pointer that goes down at the path's start, follows it at the pace it was drawn, and lifts. */
function pointerPath(finger: Finger): Record<string, unknown> {
  const [first, ...rest] = finger.path;
  const actions: Array<Record<string, unknown>> = [
    { type: 'pointerMove', duration: 0, x: Math.round(first.x), y: Math.round(first.y), origin: 'viewport' },
    { type: 'pointerDown', button: 0 },
  ];
  let previous = first.at;
  for (const p of rest) {
    actions.push({ type: 'pointerMove', duration: Math.max(10, Math.min(2_000, p.at - previous)), x: Math.round(p.x), y: Math.round(p.y), origin: 'viewport' });
    previous = p.at;
  }
  actions.push({ type: 'pointerUp', button: 0 });
  return { type: 'pointer', id: 'finger1', parameters: { pointerType: 'touch' }, actions };
}
