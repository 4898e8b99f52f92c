/**
 * The live screen's messages, the same on every leg: the browser's WebSocket on the hub (one binary WebSocket
 * message each), the link's Tunnel call (one TunnelFrame `data` each) and the gateway's screen service. A message
 * is one kind byte and its payload: `FRAME` carries one still image (JPEG, or PNG where the device gives PNG),
 * `CONTROL` one JSON object of the `ScreenControl` union, UTF-8.
 *
 * Device to viewer: `start` (once a capture runs, and again when its size or rotation changes), frames, `pong`,
 * `error` (the stream ends behind it). Viewer to device: `touch`, `key`, `text`, `rotate`, `ping`. Touch
 * coordinates are normalised 0..1 across the image as shown, so a viewer needs no device size to point.
 */

export const SCREEN_MESSAGE = { CONTROL: 1, FRAME: 2 } as const;

/** What a viewer may send in one message, at most (text is bounded separately). */
export const MAX_SCREEN_INPUT_BYTES = 8 * 1024;
/** Characters of one `text` message. */
export const MAX_SCREEN_TEXT_CHARS = 1000;

/** The hardware keys a viewer can press. */
export const SCREEN_KEYS = ['home', 'back', 'app_switch', 'volume_up', 'volume_down', 'power', 'enter', 'delete', 'menu'] as const;
export type ScreenKey = (typeof SCREEN_KEYS)[number];

/** What the device's screen source can take besides being watched. */
export interface ScreenControls {
  touch: boolean;
  keys: boolean;
  text: boolean;
  rotate: boolean;
}

export interface ScreenStart {
  t: 'start';
  /** The device's display in pixels, as upright (rotation 0). */
  width: number;
  height: number;
  /** Degrees the display is turned: 0, 90, 180, 270; frames come turned alike. */
  rotation: number;
  /** What the source takes; all false for this viewer when it is view-only. */
  controls: ScreenControls;
  /** The hardware keys the source takes when it takes only some (an iPhone: home, volume, enter, delete); absent: all. */
  keys?: ScreenKey[];
  viewOnly: boolean;
  /** The capture in use (`minicap`, `minicap-apk`, `screenshotr`, `wda-mjpeg`, ...). */
  source: string;
  /** Said to the user where the source cannot do everything (e.g. view only on iOS without WebDriverAgent). */
  note?: string;
}

export type ScreenInput =
  | { t: 'touch'; a: 'd' | 'm' | 'u'; x: number; y: number; c?: number }
  | { t: 'key'; key: ScreenKey }
  | { t: 'text'; text: string }
  | { t: 'rotate'; rotation: number }
  | { t: 'ping'; id?: number };

export type ScreenControl =
  | ScreenStart
  | ScreenInput
  | { t: 'pong'; id?: number }
  | { t: 'error'; message: string; code?: string };

export function encodeScreenControl(message: ScreenControl): Buffer {
  const json = Buffer.from(JSON.stringify(message), 'utf8');
  return Buffer.concat([Buffer.from([SCREEN_MESSAGE.CONTROL]), json]);
}

export function encodeScreenFrame(image: Buffer): Buffer {
  return Buffer.concat([Buffer.from([SCREEN_MESSAGE.FRAME]), image]);
}

export function isScreenFrame(message: Buffer): boolean {
  return message.length > 0 && message[0] === SCREEN_MESSAGE.FRAME;
}

/** The control message in `message`, or undefined when it is not one (a frame, or not valid JSON). */
export function decodeScreenControl(message: Buffer): Record<string, unknown> | undefined {
  if (message.length < 2 || message[0] !== SCREEN_MESSAGE.CONTROL) return undefined;
  try {
    const parsed: unknown = JSON.parse(message.subarray(1).toString('utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

const unit = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;

/**
 * A viewer's message read as input, checked field by field; undefined for anything else (too long, unknown kind,
 * values out of range), which the reader drops.
 */
export function parseScreenInput(message: Buffer): ScreenInput | undefined {
  if (message.length > MAX_SCREEN_INPUT_BYTES) return undefined;
  const m = decodeScreenControl(message);
  if (!m) return undefined;
  switch (m.t) {
    case 'touch': {
      const contact = m.c === undefined ? 0 : m.c;
      if ((m.a !== 'd' && m.a !== 'm' && m.a !== 'u') || !unit(m.x) || !unit(m.y)) return undefined;
      if (typeof contact !== 'number' || !Number.isInteger(contact) || contact < 0 || contact > 9) return undefined;
      return { t: 'touch', a: m.a, x: m.x, y: m.y, c: contact };
    }
    case 'key':
      return typeof m.key === 'string' && (SCREEN_KEYS as readonly string[]).includes(m.key) ? { t: 'key', key: m.key as ScreenKey } : undefined;
    case 'text':
      return typeof m.text === 'string' && m.text.length > 0 && [...m.text].length <= MAX_SCREEN_TEXT_CHARS
        ? { t: 'text', text: m.text } : undefined;
    case 'rotate':
      return m.rotation === 0 || m.rotation === 90 || m.rotation === 180 || m.rotation === 270 ? { t: 'rotate', rotation: m.rotation } : undefined;
    case 'ping':
      return { t: 'ping', ...(typeof m.id === 'number' && Number.isSafeInteger(m.id) ? { id: m.id } : {}) };
    default:
      return undefined;
  }
}

/** Whether an input changes the device (as opposed to `ping`), i.e. what a view-only viewer may not send. */
export function isControlInput(input: ScreenInput): boolean {
  return input.t !== 'ping';
}
