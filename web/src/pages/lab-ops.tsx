/** Lab operations: gateways and their USB hubs (live), reports as tables and charts with CSV export, users and roles for admins. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { call, getJson, query } from '../api/client';
import { ReportChart, type ReportChartData } from '../components/report-chart';
import { availabilityPeriods, formatDuration, type AvailabilityPoint } from '../report-format';
import type { GatewayDescription, SessionUser } from '../api/types';
import { UsersAdmin } from './admin/users-admin';
import { WaitingLine } from '../components/waiting-line';
import { useLive } from '../live/use-live';
import { may } from '../session';

export function LabOps({ user }: { user: SessionUser }) {
  return (
    <main class="page">
      <h1>Lab</h1>
      {may(user, 'SystemViewGateways') ? <Gateways user={user} /> : <p class="muted">Viewing gateways needs SystemViewGateways.</p>}
      {may(user, 'DeviceReleaseAny') && <WaitingLine />}
      {may(user, 'UserList') && may(user, 'DeviceList') && may(user, 'ApplicationList') && <Reports />}
      {may(user, 'UserList') && <UsersAdmin user={user} />}
    </main>
  );
}

const isConnected = (g: GatewayDescription): boolean => g.isConnected ?? true;
/** Where clients reach the gateway, as it reports itself (its port only when it named one). */
const addressOf = (g: GatewayDescription): string => (g.publicAddress ? `${g.publicAddress}${g.publicPort > 0 ? `:${g.publicPort}` : ''}` : '—');
/** `lastSeenAt` is when the link last changed; while the link is up the gateway is seen now (heartbeats). */
const lastSeenText = (g: GatewayDescription): string =>
  isConnected(g) ? 'Connected now' : g.lastSeenAt ? new Date(g.lastSeenAt).toLocaleString() : '—';

function Gateways({ user }: { user: SessionUser }) {
  const store = useLive();
  const gateways = [...store.gateways.values()].sort((a, b) => a.name.localeCompare(b.name));
  const devicesOf = (hubSerials: string[]) => [...store.devices.values()].filter((d) => d.usbHubSerialNumber && hubSerials.includes(d.usbHubSerialNumber)).length;
  const setPort = (hub: string, port: number, state: string) =>
    call('POST', `/Gateway/UsbHub${query({ verb: 'update', id: hub, usbHubPort: port, usbHubPortState: state })}`).catch((err: Error) => alert(err.message));
  return (
    <section class="card">
      <h2>Gateways</h2>
      {gateways.length === 0 && <p class="muted">No gateway registered.</p>}
      {gateways.map((g) => (
        <article key={g.name} class="gateway">
          <h3>{g.name} <small class={`state ${isConnected(g) ? 'free' : 'offline'}`} data-testid="gateway-state">{isConnected(g) ? 'Connected' : 'Disconnected'}</small></h3>
          <p class="muted">{devicesOf(g.usbHubList.map((h) => h.serialNumber))} devices on its hubs</p>
          <dl class="facts">
            <dt>Address</dt><dd data-testid="gateway-address">{addressOf(g)}</dd>
            <dt>Last seen</dt><dd data-testid="gateway-last-seen">{lastSeenText(g)}</dd>
            <dt>Version</dt><dd data-testid="gateway-version">{g.version ?? '—'}</dd>
            {g.hubReplica && <><dt>Hub replica</dt><dd>{g.hubReplica}</dd></>}
          </dl>
          {g.usbHubList.map((hub) => (
            <div key={hub.serialNumber} class="hub">
              <h4>{hub.name || hub.model} {hub.serialNumber} {hub.isErrored && <span class="error">{hub.errorMessage}</span>}</h4>
              <p class="muted">5 V now {hub.fiveVoltNow?.toFixed(2) ?? '—'} V (min {hub.fiveVoltMin?.toFixed(2) ?? '—'}, max {hub.fiveVoltMax?.toFixed(2) ?? '—'})</p>
              <div class="table-scroll"><table class="table"><thead><tr><th>Port</th><th>Device</th><th>State</th><th>Current</th><th>Flags</th>{may(user, 'SystemManageUsbHubs') && <th>Switch</th>}</tr></thead>
                <tbody>{hub.devices.map((port) => (
                  <tr key={port.usbHubPortNumber} data-port={port.usbHubPortNumber}>
                    <td>{port.usbHubPortNumber}</td><td>{port.name || '—'}</td><td data-testid="port-state">{port.state}</td>
                    <td>{port.milliamps} mA</td><td>{port.flags}</td>
                    {may(user, 'SystemManageUsbHubs') && <td><span class="buttons">{['Off', 'Data', 'Charge'].map((s) =>
                      <button type="button" key={s} aria-label={`Port ${port.usbHubPortNumber} ${s}`} onClick={() => setPort(hub.serialNumber, port.usbHubPortNumber, s)}>{s}</button>)}</span></td>}
                  </tr>
                ))}</tbody>
              </table></div>
            </div>
          ))}
        </article>
      ))}
    </section>
  );
}

interface UsageRow { deviceName?: string; reservedByName?: string; performedByName?: string; eventType: string; startDate: string; endDate?: string; duration?: number }

function toCsv(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '';
  const columns = Object.keys(rows[0]);
  const cell = (v: unknown) => { const t = v == null ? '' : String(v); return /[",\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t; };
  return [columns.join(','), ...rows.map((r) => columns.map((c) => cell(r[c])).join(','))].join('\n');
}

function download(name: string, rows: Record<string, unknown>[]) {
  const url = URL.createObjectURL(new Blob([toCsv(rows)], { type: 'text/csv' }));
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function Reports() {
  const [days, setDays] = useState(7);
  const [usage, setUsage] = useState<UsageRow[]>([]);
  const [availability, setAvailability] = useState<AvailabilityPoint[]>([]);
  useEffect(() => {
    getJson<{ deviceUsage: UsageRow[] }>(`/Report/Usage${query({ days, take: 500 })}`).then((r) => setUsage(r.deviceUsage ?? []), () => setUsage([]));
    getJson<AvailabilityPoint[] | { data?: AvailabilityPoint[] }>(`/Report/Availability${query({ days })}`)
      .then((r) => setAvailability(Array.isArray(r) ? r : r.data ?? []), () => setAvailability([]));
  }, [days]);
  const perDevice = new Map<string, number>();
  const perUser = new Map<string, number>();
  for (const row of usage) {
    const seconds = row.duration ?? 0;
    if (row.deviceName) perDevice.set(row.deviceName, (perDevice.get(row.deviceName) ?? 0) + seconds);
    const who = row.reservedByName ?? row.performedByName;
    if (who) perUser.set(who, (perUser.get(who) ?? 0) + seconds);
  }
  const max = Math.max(1, ...perDevice.values());
  const periods = availabilityPeriods(availability);
  // Bars in hours, or in minutes while every total is under two hours (a new lab's would all read 0.00).
  const inMinutes = Math.max(0, ...perDevice.values(), ...perUser.values()) < 7200;
  const unit = inMinutes ? { label: 'minutes', seconds: 60 } : { label: 'hours', seconds: 3600 };
  const bars = (totals: Map<string, number>): ReportChartData => ({
    kind: 'bars', names: [...totals.keys()], label: unit.label, values: [...totals.values()].map((s) => Number((s / unit.seconds).toFixed(2))),
  });
  const charts = useMemo(() => ({
    perDevice: bars(perDevice),
    perUser: bars(perUser),
    availability: {
      kind: 'time', times: availability.map((p) => Date.parse(p.date) / 1000),
      series: [{ label: 'online', values: availability.map((p) => p.online) }, { label: 'in use', values: availability.map((p) => p.inUse) }],
    } as ReportChartData,
  }), [usage, availability]);
  return (
    <section class="card">
      <h2>Reports</h2>
      <label>Days<select value={days} onChange={(e) => setDays(Number((e.target as HTMLSelectElement).value))}>
        {[1, 7, 30].map((d) => <option key={d} value={d}>{d}</option>)}</select></label>
      <div class="cols">
        <div>
          <h3>Usage per device <button type="button" onClick={() => download('usage-per-device.csv', [...perDevice].map(([device, seconds]) => ({ device, hours: (seconds / 3600).toFixed(2) })))}>CSV</button></h3>
          <ReportChart data={charts.perDevice} title="Usage per device" />
          <table class="table"><tbody>{[...perDevice].map(([name, seconds]) => (
            <tr key={name}><td>{name}</td><td class="bar"><span style={{ width: `${(100 * seconds) / max}%` }} /></td><td>{formatDuration(seconds)}</td></tr>))}</tbody></table>
          {perDevice.size === 0 && <p class="muted">No device was used in this period.</p>}
        </div>
        <div>
          <h3>Usage per user <button type="button" onClick={() => download('usage-per-user.csv', [...perUser].map(([user, seconds]) => ({ user, hours: (seconds / 3600).toFixed(2) })))}>CSV</button></h3>
          <ReportChart data={charts.perUser} title="Usage per user" />
          <table class="table"><tbody>{[...perUser].map(([name, seconds]) => <tr key={name}><td>{name}</td><td>{formatDuration(seconds)}</td></tr>)}</tbody></table>
          {perUser.size === 0 && <p class="muted">Nobody used a device in this period.</p>}
        </div>
      </div>
      <h3>Availability <button type="button" onClick={() => download('availability.csv', availability as unknown as Record<string, unknown>[])}>CSV</button></h3>
      <ReportChart data={charts.availability} title="Devices online and in use over time" />
      {periods.length === 0
        ? <p class="muted">No device was online or in use in this period.</p>
        : <div class="table-scroll"><table class="table availability-table"><thead><tr><th>From</th><th>Until</th><th>Online</th><th>In use</th></tr></thead>
          <tbody>{periods.map((p) => <tr key={p.from}><td>{new Date(p.from).toLocaleString()}</td><td>{p.until ? new Date(p.until).toLocaleString() : 'now'}</td><td>{p.online}</td><td>{p.inUse}</td></tr>)}</tbody></table></div>}
    </section>
  );
}
