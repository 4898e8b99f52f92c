/** One device: facts, actions, USB port, apps, live log, metrics and history. */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, awaitJob, call, getJson, getText, query } from '../api/client';
import { failureText } from '../api/failure-advice';
import { LeaseFacts } from '../components/lease-facts';
import type { Application, Device, DeviceAccessTicket, FailureCode, Result, SessionUser } from '../api/types';
import { AutomationPanel } from '../components/automation-panel';
import { Calendar } from '../calendar/calendar';
import { ConnectLines, keepTicket } from '../components/connect-lines';
import { LiveScreen } from '../components/live-screen';
import { MetricsPanel } from '../components/metrics-panel';
import { ScreenShares } from '../components/screen-shares';
import { live, type HistoryEvent } from '../live/store';
import { useLive } from '../live/use-live';
import { batteryText, portText, readiness } from '../readiness';
import { may } from '../session';

export function DevicePage({ id, user }: { id: string; user: SessionUser }) {
  const store = useLive();
  const [detail, setDetail] = useState<Device | undefined>();
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState('');
  const [watchOnly, setWatchOnly] = useState(false);
  // An administrator watches another's device only when asked (each view-only viewer is an event in the history).
  const [watching, setWatching] = useState(false);
  // A view-only share link opens this page with `?share=<token>`.
  const share = new URLSearchParams(location.search).get('share') ?? undefined;
  const live = store.devices.get(id);
  // Keys the live record omits are absent now (an ended automation session), not to be taken from the first load.
  const device = live ? { ...detail, ...live, automationSessionSignature: live.automationSessionSignature, automationSessionStartTime: live.automationSessionStartTime,
    properties: detail?.properties, installedApplications: detail?.installedApplications } as Device : detail;

  const loadDetail = () => getJson<Device[]>(`/Device${query({ id, properties: true, allApplications: true })}`)
    .then((list) => (list[0] ? setDetail(list[0]) : setError('No such device.')), (err: Error) => setError(err.message));
  useEffect(() => {
    void loadDetail();
  }, [id]);

  if (!device) return <main class="page">{error ? <p class="error" role="alert">{error}</p> : <p>Loading…</p>}</main>;
  const state = readiness(device, user);

  /** Runs one action with a busy label, then shows its outcome. */
  const act = async (label: string, work: () => Promise<unknown>, done: string) => {
    setBusy(label);
    setError('');
    setNotice('');
    try {
      await work();
      setNotice(done);
      void loadDetail();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy('');
    }
  };
  const deviceAction = (action: string, done: string, extra: Record<string, string> = {}) =>
    act(action, () => call('POST', `/Device${query({ action, id: device.id, ...extra })}`), done);
  const setPort = (state: string) => act(`port ${state}`, () =>
    call('POST', `/Device/UsbPort${query({ verb: 'update', deviceId: device.id, usbHubPortState: state })}`), `USB port set to ${state}.`);

  const mine = device.retainedById === user.id;
  const retain = () => act('retain', async () => keepTicket(device.id,
    await call<DeviceAccessTicket>('POST', `/Device${query({ action: 'retain', id: device.id })}`)), 'Retained.');
  return (
    <main class="page device-page">
      <header class="device-head">
        <h1>{device.name}</h1>
        <span class={`state ${state.kind}`} data-testid="device-state">{state.text}</span>
        {state.reason && <span class="muted" data-testid="device-state-reason">{state.reason}</span>}
      </header>
      <div class="actions" role="group" aria-label="Device actions">
        {may(user, 'DeviceConnect') && !device.retainedById && <button type="button" disabled={!!busy} onClick={retain}>Retain</button>}
        {device.retainedById && (mine || may(user, 'DeviceReleaseAny')) && <button type="button" disabled={!!busy} onClick={() => deviceAction('release', 'Released.')}>Release</button>}
        {may(user, 'DeviceReboot') && <button type="button" disabled={!!busy} onClick={() => deviceAction('reboot', 'Reboot requested.')}>Reboot</button>}
        {may(user, 'DeviceApplicationManagement') && <button type="button" disabled={!!busy}
          onClick={() => confirm(`Reset ${device.name}? User-installed apps may be removed.`) && deviceAction('reset', 'Reset done.')}>Reset</button>}
        {may(user, 'DeviceEnablement') && (device.enabled
          ? <button type="button" disabled={!!busy} onClick={() => deviceAction('disable', 'Disabled.')}>Disable</button>
          : <button type="button" disabled={!!busy} onClick={() => deviceAction('enable', 'Enabled.')}>Enable</button>)}
        {may(user, 'SystemManageUsbHubs') && device.usbHubSerialNumber && (
          <fieldset class="port" disabled={!!busy}>
            <legend>USB port</legend>
            {['Off', 'Data', 'Charge'].map((s) => <button type="button" key={s} onClick={() => setPort(s)}>{s}</button>)}
          </fieldset>
        )}
        {busy && <span class="muted" role="status">Working: {busy}…</span>}
      </div>
      {notice && <p class="notice" role="status">{notice}</p>}
      {error && <p class="error" role="alert">{error}</p>}
      {mine && <ConnectLines device={device} />}
      {device.availability === 'Online' && (mine || share || may(user, 'DeviceReleaseAny')) && <section class="cols screen-cols">
        <div>
          {mine && <label class="check"><input type="checkbox" checked={watchOnly}
            onChange={(e) => setWatchOnly((e.target as HTMLInputElement).checked)} />Watch only (leave a running automation alone)</label>}
          {mine || share || watching
            ? <LiveScreen key={`${device.retainedById ?? ''}`} deviceId={device.id} deviceName={device.name}
              viewOnly={!mine || watchOnly} share={mine ? undefined : share} />
            : <button type="button" onClick={() => setWatching(true)}>Watch the screen (view only)</button>}
        </div>
        {mine && <ScreenShares deviceId={device.id} />}
      </section>}
      <AutomationPanel device={device} />
      <section class="cols">
        <div class="card">
          <h2>Facts</h2>
          <dl class="facts">
            <dt>Model</dt><dd>{device.friendlyModel ?? device.model ?? '—'}</dd>
            <dt>Manufacturer</dt><dd>{device.manufacturer ?? '—'}</dd>
            <dt>OS</dt><dd>{device.operatingSystem} {device.operatingSystemVersion}</dd>
            <dt>Serial</dt><dd>{device.serialNumber ?? '—'}</dd>
            <dt>Battery</dt><dd>{batteryText(device)} ({device.batteryStatus})</dd>
            <dt>USB</dt><dd>{portText(device)}</dd>
            <dt>Form factor</dt><dd>{device.formFactor}</dd>
            <dt>Readiness</dt><dd data-testid="readiness">{device.readiness ?? '—'}</dd>
            {device.retainedById && <><dt>In use by</dt><dd>{device.retainedByDisplayName ?? device.retainedById}{device.automationSessionSignature ? ' (automation session)' : ''}</dd></>}
            <LeaseFacts device={device} />
            {device.reservedById && <><dt>Reserved by</dt><dd>{device.reservedByDisplayName ?? device.reservedById}</dd></>}
          </dl>
          {device.properties && device.properties.length > 0 && (
            <details><summary>Properties ({device.properties.length})</summary>
              <dl class="facts small">{device.properties.map((p) => <><dt>{p.name}</dt><dd>{p.value}</dd></>)}</dl>
            </details>
          )}
        </div>
        <AppsPanel device={device} user={user} onChanged={loadDetail} />
      </section>
      <section class="card" aria-label="Calendar">
        <h2>Calendar</h2>
        <Calendar user={user} device={{ id: device.id, name: device.name }} />
      </section>
      <MetricsPanel deviceId={device.id} />
      <section class="cols">
        <LogPanel deviceId={device.id} />
        <HistoryPanel deviceId={device.id} user={user} />
      </section>
    </main>
  );
}

function AppsPanel({ device, user, onChanged }: { device: Device; user: SessionUser; onChanged: () => void }) {
  const [library, setLibrary] = useState<Application[]>([]);
  const [choice, setChoice] = useState('');
  /** The running action; `percent` once the hub reported how far it is (installs). */
  const [progress, setProgress] = useState<{ label: string; percent?: number } | undefined>();
  const [message, setMessage] = useState<{ text: string; failed: boolean; code?: FailureCode } | undefined>();
  const manage = may(user, 'DeviceApplicationManagement');
  useEffect(() => {
    if (may(user, 'ApplicationList')) {
      getJson<Application[]>('/Application').then((apps) => setLibrary(apps.filter((a) => a.enabled && a.operatingSystem === device.operatingSystem)), () => undefined);
    }
  }, [device.id]);
  const run = async (label: string, action: string, appId: string, asyncJob: boolean) => {
    setProgress({ label });
    setMessage(undefined);
    try {
      const reply = await call<{ asyncResponseId: string }>('POST', `/Application${query({ action, id: appId, deviceId: device.id })}`);
      if (asyncJob && reply?.asyncResponseId) {
        const outcome = await awaitJob<Result>(reply.asyncResponseId, (percent) => setProgress({ label, percent }));
        if (outcome && outcome.isSuccess === false) throw new ApiError(outcome.errorMessage ?? `${label} failed`, 200, outcome.errorCode);
      }
      setMessage({ text: `${label}: done.`, failed: false });
      onChanged();
    } catch (err) {
      const code = err instanceof ApiError ? err.code : undefined;
      setMessage({ text: `${label} failed: ${failureText((err as Error).message, code)}`, failed: true, code });
    } finally {
      setProgress(undefined);
    }
  };
  const installed = device.installedApplications ?? [];
  return (
    <div class="card">
      <h2>Apps</h2>
      {manage && library.length > 0 && (
        <form class="inline" onSubmit={(e) => { e.preventDefault(); if (choice) void run('Install', 'install', choice, true); }}>
          <label>Install from the library
            <select value={choice} onChange={(e) => setChoice((e.target as HTMLSelectElement).value)}>
              <option value="">Choose an app…</option>
              {library.map((a) => <option value={a.id} key={a.id}>{a.displayName} {a.version ?? ''} (v{a.versionCounter})</option>)}
            </select>
          </label>
          <button type="submit" disabled={!choice || !!progress}>Install</button>
        </form>
      )}
      {progress && (
        <div class="progress" role="status" data-percent={progress.percent}>
          <span>{progress.label} in progress{progress.percent === undefined ? '…' : `: ${progress.percent}%`}</span>
          <progress aria-label={`${progress.label} progress`} max={100} value={progress.percent} />
        </div>
      )}
      {message && <p class={message.failed ? 'error' : 'notice'} role="status" data-error-code={message.code}>{message.text}</p>}
      <ul class="apps">
        {installed.length === 0 && <li class="muted">No apps reported.</li>}
        {installed.map((a) => {
          const managed = a.id !== '00000000-0000-0000-0000-000000000000';
          return (
            <li key={`${a.applicationIdentifier}-${a.id}`}>
              <span><strong>{a.displayName || a.applicationIdentifier}</strong> <small>{a.applicationIdentifier} {a.version ?? ''}</small></span>
              {manage && managed && <span class="buttons">
                <button type="button" disabled={!!progress} onClick={() => run('Launch', 'launch', a.id, true)}>Launch</button>
                <button type="button" disabled={!!progress} onClick={() => run('Uninstall', 'uninstall', a.id, false)}>Uninstall</button>
              </span>}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

/** The device log, followed while the page is open (the hub reads it from the gateway on each poll). */
function LogPanel({ deviceId }: { deviceId: string }) {
  const [lines, setLines] = useState('');
  const [follow, setFollow] = useState(true);
  const [error, setError] = useState('');
  useEffect(() => {
    if (!follow) return;
    let stopped = false;
    const read = async () => {
      try {
        const text = await getText(`/Device/Log${query({ id: deviceId, lines: 200 })}`);
        const body = text.startsWith('{') ? JSON.parse(text) : { isSuccess: true, data: text };
        if (!stopped) {
          if (body.isSuccess === false) setError(body.errorMessage);
          else { setError(''); setLines(Array.isArray(body.data) ? body.data.join('\n') : String(body.data ?? '')); }
        }
      } catch (err) {
        if (!stopped) setError((err as Error).message);
      }
      if (!stopped) timer = setTimeout(read, 2000);
    };
    let timer = setTimeout(read, 0);
    return () => { stopped = true; clearTimeout(timer); };
  }, [deviceId, follow]);
  return (
    <div class="card">
      <h2>Device log</h2>
      <label class="check"><input type="checkbox" checked={follow} onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} />Follow</label>
      {error && <p class="muted">{error}</p>}
      <pre class="log" tabIndex={0} aria-label="Device log">{lines || '—'}</pre>
    </div>
  );
}

function HistoryPanel({ deviceId, user }: { deviceId: string; user: SessionUser }) {
  const [events, setEvents] = useState<HistoryEvent[] | undefined>();
  useEffect(() => {
    if (!may(user, 'DeviceList') || !may(user, 'UserList') || !may(user, 'ApplicationList')) return;
    // Events recorded while the page is open arrive over the live stream; those heard before the first page
    // loaded are kept and merged with it.
    const heard: HistoryEvent[] = [];
    let loaded = false;
    const merge = (events: HistoryEvent[]) => setEvents((shown) => {
      const all = [...events, ...(shown ?? [])];
      return all.filter((e, i) => all.findIndex((other) => other.id === e.id) === i)
        .sort((a, b) => Date.parse(b.eventDate) - Date.parse(a.eventDate)).slice(0, 50);
    });
    const unsubscribe = live.onHistory((event) => {
      if (event.deviceId !== deviceId) return;
      if (loaded) merge([event]);
      else heard.push(event);
    });
    getJson<{ events: HistoryEvent[] }>(`/Report/History${query({ deviceId, take: 50 })}`).then((h) => {
      loaded = true;
      merge([...heard, ...h.events]);
    }, () => setEvents([]));
    return unsubscribe;
  }, [deviceId]);
  if (!events) return <div class="card"><h2>History</h2><p class="muted">History needs the report entitlements.</p></div>;
  return (
    <div class="card">
      <h2>History</h2>
      <table class="table"><thead><tr><th>When</th><th>Event</th><th>By</th><th>Detail</th></tr></thead>
        <tbody>{events.map((e) => <tr key={e.id}><td>{new Date(e.eventDate).toLocaleString()}</td><td>{e.eventType}</td><td>{e.performedByName ?? ''}</td><td>{historyDetail(e)}</td></tr>)}</tbody>
      </table>
    </div>
  );
}

/** What happened, to which app, and the event's value (a version, a reason) when the message does not say it. */
function historyDetail(e: HistoryEvent): string {
  let text = e.message ?? '';
  if (e.applicationName) text += `: ${e.applicationName}`;
  if (e.stringValue && !text.includes(e.stringValue)) text += ` (${e.stringValue})`;
  return text;
}
