/**
 * W3C WebDriver actions (`POST /session/:id/actions`) run against a touch screen: input sources are ticked in
 * lockstep, pointer moves land on the screen (origin viewport, pointer or an element's center), pointerDown/Up
 * touch with one contact per pointer source, key sources type their characters, pauses wait (bounded).
 */
import { ELEMENT_KEY, invalidArgument } from './json-wire';

export interface ActionTarget {
  touch(contact: number, action: 'down' | 'move' | 'up', x: number, y: number): void;
  /** A typed key: a printable character, or a WebDriver key code point (U+E000..U+F8FF). */
  key(value: string): void;
  /** Center of an element a move is relative to. */
  elementCenter(id: string): [number, number];
}

interface RawAction { type?: unknown; duration?: unknown; x?: unknown; y?: unknown; origin?: unknown; value?: unknown; button?: unknown }
interface Source { id: string; type: string; actions: RawAction[] }

/** The longest a single pause or move may take: a device-side server never stalls longer on one request. */
const MAX_STEP_MS = 10_000;

export async function performActions(body: Record<string, unknown>, target: ActionTarget): Promise<void> {
  const raw = body.actions;
  if (!Array.isArray(raw)) throw invalidArgument("'actions' must be an array");
  const sources: Source[] = raw.map((s: Record<string, unknown>, i) => {
    if (!s || typeof s !== 'object' || !Array.isArray(s.actions)) throw invalidArgument(`Action source ${i} has no 'actions' array`);
    return { id: String(s.id ?? i), type: String(s.type ?? 'none'), actions: s.actions as RawAction[] };
  });
  const ticks = Math.max(0, ...sources.map((s) => s.actions.length));
  const pointers = new Map<string, { x: number; y: number; down: boolean; contact: number }>();
  sources.filter((s) => s.type === 'pointer').forEach((s, i) => pointers.set(s.id, { x: 0, y: 0, down: false, contact: i }));
  for (let tick = 0; tick < ticks; tick++) {
    let tickMs = 0;
    for (const source of sources) {
      const a = source.actions[tick];
      if (!a) continue;
      const duration = typeof a.duration === 'number' && a.duration > 0 ? Math.min(a.duration, MAX_STEP_MS) : 0;
      if (a.type === 'pause') {
        tickMs = Math.max(tickMs, duration);
        continue;
      }
      if (source.type === 'key') {
        if (a.type === 'keyDown' && typeof a.value === 'string') target.key(a.value);
        continue;
      }
      const p = pointers.get(source.id);
      if (!p) continue;
      if (a.type === 'pointerMove') {
        const [ox, oy] = originOf(a.origin, p, target);
        const x = Math.round(ox + Number(a.x ?? 0));
        const y = Math.round(oy + Number(a.y ?? 0));
        if (!Number.isFinite(x) || !Number.isFinite(y)) throw invalidArgument('pointerMove needs numeric x and y');
        p.x = x;
        p.y = y;
        if (p.down) target.touch(p.contact, 'move', x, y);
        tickMs = Math.max(tickMs, duration);
      } else if (a.type === 'pointerDown') {
        p.down = true;
        target.touch(p.contact, 'down', p.x, p.y);
      } else if (a.type === 'pointerUp') {
        if (p.down) target.touch(p.contact, 'up', p.x, p.y);
        p.down = false;
      } else if (a.type !== 'pointerCancel') {
        throw invalidArgument(`Unknown pointer action '${String(a.type)}'`);
      }
    }
    if (tickMs) await new Promise((r) => setTimeout(r, tickMs));
  }
  // Pointers left down are released at the end, as the servers do.
  for (const p of pointers.values()) if (p.down) target.touch(p.contact, 'up', p.x, p.y);
}

function originOf(origin: unknown, p: { x: number; y: number }, target: ActionTarget): [number, number] {
  if (origin === 'pointer') return [p.x, p.y];
  if (origin && typeof origin === 'object') {
    const o = origin as Record<string, unknown>;
    const id = o[ELEMENT_KEY] ?? o.ELEMENT;
    if (typeof id === 'string') return target.elementCenter(id);
  }
  return [0, 0];
}
