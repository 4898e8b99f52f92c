/**
 * The device's running automation session (WebDriver through the hub's /Appium): who runs it, since when, its last
 * command and idle limit, and the session's Appium log, followed while the page is open.
 */
import { useEffect, useState } from 'preact/hooks';
import { getJson, query } from '../api/client';
import type { AutomationSession, Device, Result } from '../api/types';

const POLL_MS = 2000;

export function AutomationPanel({ device }: { device: Device }) {
  const [session, setSession] = useState<AutomationSession | undefined>();
  const [log, setLog] = useState('');
  const [error, setError] = useState('');
  const running = device.automationSessionSignature;
  useEffect(() => {
    if (!running) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      try {
        const [view, lines] = await Promise.all([
          getJson<Result<AutomationSession>>(`/Device/AutomationSession${query({ id: device.id })}`),
          getJson<Result<string>>(`/Device/AppiumLog${query({ id: device.id, currentSessionOnly: true })}`),
        ]);
        if (stopped) return;
        setSession(view.data);
        setLog(readableLog(lines.data ?? ''));
        setError('');
      } catch (err) {
        if (!stopped) setError((err as Error).message);
      }
      if (!stopped) timer = setTimeout(read, POLL_MS);
    };
    timer = setTimeout(read, 0);
    return () => { stopped = true; clearTimeout(timer); };
  }, [device.id, running]);
  if (!running) return null;
  return (
    <section class="card automation" aria-label="Automation session" data-testid="automation-session">
      <h2>Automation session</h2>
      <dl class="facts">
        <dt>Session</dt><dd><code>{session?.sessionId ?? running}</code></dd>
        <dt>By</dt><dd data-testid="automation-user">{session?.userName ?? device.retainedByDisplayName ?? '—'}</dd>
        <dt>Since</dt><dd>{when(session?.startTime ?? device.automationSessionStartTime)}</dd>
        <dt>Last command</dt><dd data-testid="automation-last-command">{when(session?.lastCommandTime)}</dd>
        <dt>Idle limit</dt><dd>{session ? (session.newCommandTimeout ? `${session.newCommandTimeout} s` : 'none') : '—'}</dd>
      </dl>
      {error && <p class="muted">{error}</p>}
      <pre class="log" tabIndex={0} aria-label="Automation log">{log || '—'}</pre>
    </section>
  );
}

const when = (date: string | undefined) => (date ? new Date(date).toLocaleString() : '—');

/** Appium's JSON lines as text: time, level, message (a line that is not JSON is shown as it is). */
function readableLog(text: string): string {
  return text.split('\n').filter(Boolean).map((line) => {
    try {
      const entry = JSON.parse(line) as { timestamp?: string; level?: string; message?: string; prefix?: string };
      return [entry.timestamp, entry.level, entry.prefix ? `[${entry.prefix}]` : '', entry.message].filter(Boolean).join(' ');
    } catch {
      return line;
    }
  }).join('\n');
}
