/**
 * A device's live screen: the hub's `/Device/Screen` WebSocket (same origin, the session cookie), frames drawn on
 * a canvas, and for a viewer who controls it touch (click, drag, long press: the pointer held), typed text (any
 * Unicode), the hardware keys the device has (all, or the `keys` its start message names: an iPhone's) and
 * rotation; a screenshot download of the frame shown. A source that cannot take input says why in its note.
 * Messages are one kind byte and a payload (the hub's format, shared/src/screen-protocol.ts): 1 JSON, 2 an image.
 * While a frame is still being decoded, newer ones replace the one waiting, so a slow tab shows the newest frame
 * rather than a backlog.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ScreenInput, ScreenKey, ScreenStart } from '../../../shared/src/screen-protocol';
import { query } from '../api/client';

const CONTROL = 1;
const FRAME = 2;

const KEYS: { key: ScreenKey; label: string }[] = [
  { key: 'home', label: 'Home' }, { key: 'back', label: 'Back' }, { key: 'app_switch', label: 'Apps' },
  { key: 'volume_down', label: 'Vol −' }, { key: 'volume_up', label: 'Vol +' }, { key: 'power', label: 'Power' },
  { key: 'enter', label: 'Enter' }, { key: 'delete', label: 'Delete' },
];

/** What the capture is, as a person reads it; a source this page does not know yet shows its own name. */
const SOURCE_LABELS: Record<string, string> = {
  minicap: 'minicap',
  'minicap-apk': 'minicap (app_process)',
  'uiautomator2-mjpeg': 'UiAutomator2 MJPEG (Appium session)',
  screenshotr: 'screenshots (screenshotr)',
};

function sourceLabel(source: string): string {
  return SOURCE_LABELS[source] ?? source;
}

export function LiveScreen({ deviceId, deviceName, viewOnly, share }: { deviceId: string; deviceName: string; viewOnly: boolean; share?: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const socket = useRef<WebSocket | undefined>(undefined);
  const [start, setStart] = useState<ScreenStart | undefined>();
  const [status, setStatus] = useState('Connecting…');
  const [text, setText] = useState('');
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}/apiv1/Device/Screen${query({ id: deviceId, viewOnly: viewOnly || undefined, share })}`);
    ws.binaryType = 'arraybuffer';
    socket.current = ws;
    let decoding = false;
    let waiting: Blob | undefined;
    let shown = 0;
    let ended = '';
    const draw = async (blob: Blob) => {
      decoding = true;
      try {
        const bitmap = await createImageBitmap(blob);
        const target = canvas.current;
        if (target) {
          if (target.width !== bitmap.width || target.height !== bitmap.height) {
            target.width = bitmap.width;
            target.height = bitmap.height;
          }
          target.getContext('2d')?.drawImage(bitmap, 0, 0);
          shown++;
          target.dataset.frames = String(shown);
        }
        bitmap.close();
      } catch {
        // A frame the browser cannot decode is skipped.
      }
      decoding = false;
      const next = waiting;
      waiting = undefined;
      if (next) void draw(next);
    };
    ws.onopen = () => setStatus('Live');
    ws.onmessage = (event) => {
      const bytes = new Uint8Array(event.data as ArrayBuffer);
      if (bytes[0] === FRAME) {
        const blob = new Blob([bytes.subarray(1)], { type: bytes[1] === 0x89 ? 'image/png' : 'image/jpeg' });
        if (decoding) waiting = blob;
        else void draw(blob);
        return;
      }
      if (bytes[0] !== CONTROL) return;
      const message = JSON.parse(new TextDecoder().decode(bytes.subarray(1))) as { t: string; message?: string };
      if (message.t === 'start') setStart(message as ScreenStart);
      if (message.t === 'error') ended = message.message ?? '';
    };
    ws.onclose = (event) => setStatus(`Ended${ended || event.reason ? `: ${ended || event.reason}` : ''}`);
    return () => {
      socket.current = undefined;
      ws.close();
    };
  }, [deviceId, viewOnly, share, attempt]);

  const send = (input: ScreenInput) => {
    const ws = socket.current;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    const json = new TextEncoder().encode(JSON.stringify(input));
    const message = new Uint8Array(json.length + 1);
    message[0] = CONTROL;
    message.set(json, 1);
    ws.send(message);
  };

  const controls = start && !start.viewOnly ? start.controls : undefined;
  const pointer = useRef<{ down: boolean; pending?: { x: number; y: number }; frame?: number }>({ down: false });
  const point = (e: PointerEvent) => {
    const box = (e.currentTarget as HTMLCanvasElement).getBoundingClientRect();
    return { x: Math.min(1, Math.max(0, (e.clientX - box.left) / box.width)), y: Math.min(1, Math.max(0, (e.clientY - box.top) / box.height)) };
  };
  const onDown = (e: PointerEvent) => {
    if (!controls?.touch) return;
    (e.currentTarget as HTMLCanvasElement).setPointerCapture(e.pointerId);
    pointer.current.down = true;
    send({ t: 'touch', a: 'd', ...point(e) });
  };
  const onMove = (e: PointerEvent) => {
    const state = pointer.current;
    if (!state.down) return;
    // One move per animation frame: a drag sends as fast as the screen redraws, not as fast as the mouse reports.
    state.pending = point(e);
    state.frame ??= requestAnimationFrame(() => {
      state.frame = undefined;
      if (state.pending && state.down) send({ t: 'touch', a: 'm', ...state.pending });
      state.pending = undefined;
    });
  };
  const onUp = (e: PointerEvent) => {
    const state = pointer.current;
    if (!state.down) return;
    state.down = false;
    if (state.pending) send({ t: 'touch', a: 'm', ...state.pending });
    state.pending = undefined;
    send({ t: 'touch', a: 'u', ...point(e) });
  };
  const download = () => canvas.current?.toBlob((blob) => {
    if (!blob) return;
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = `${deviceName}-${new Date().toISOString().replace(/[:.]/g, '-')}.png`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  }, 'image/png');

  return (
    <section class="card live-screen" aria-labelledby="screen-title">
      <h2 id="screen-title">Screen</h2>
      <p class="muted" role="status" data-testid="screen-status">
        {status}{start ? ` · ${sourceLabel(start.source)}` : ''}{start?.viewOnly ? ' · view only' : ''}
      </p>
      {start?.note && <p class="muted" data-testid="screen-note">{start.note}</p>}
      <div class="screen-frame">
        <canvas ref={canvas} data-testid="screen-canvas" aria-label={`Screen of ${deviceName}`} class={controls?.touch ? 'touchable' : ''}
          onPointerDown={onDown} onPointerMove={onMove} onPointerUp={onUp} onPointerCancel={onUp} />
      </div>
      {status.startsWith('Ended') && <button type="button" onClick={() => { setStart(undefined); setStatus('Connecting…'); setAttempt(attempt + 1); }}>Reconnect</button>}
      <div class="screen-tools">
        {controls?.keys && <div role="group" aria-label="Hardware keys" class="buttons">
          {KEYS.filter(({ key }) => !start?.keys || start.keys.includes(key)).map(({ key, label }) => <button type="button" key={key} onClick={() => send({ t: 'key', key })}>{label}</button>)}
        </div>}
        {controls?.rotate && start && <button type="button" onClick={() => send({ t: 'rotate', rotation: (start.rotation + 90) % 360 })}>Rotate</button>}
        <button type="button" onClick={download} disabled={!start}>Screenshot</button>
      </div>
      {controls?.text && (
        <form class="inline" onSubmit={(e) => { e.preventDefault(); if (text) { send({ t: 'text', text }); setText(''); } }}>
          <label>Type on the device<input type="text" value={text} data-testid="screen-text"
            onInput={(e) => setText((e.target as HTMLInputElement).value)} /></label>
          <button type="submit" disabled={!text}>Send text</button>
        </form>
      )}
    </section>
  );
}
