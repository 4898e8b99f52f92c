/** The device grid: one row per device, filters, sorting, live; virtualised for large labs. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Device, SessionUser } from '../api/types';
import { VirtualList } from '../components/virtual-list';
import { useLive } from '../live/use-live';
import { batteryText, portText, readiness } from '../readiness';
import { linkClick } from '../router';

type SortKey = 'name' | 'os' | 'state' | 'battery' | 'port';

/** Performance mark of the first full grid shown after page load (scripts/bench/dashboard.mjs). */
const GRID_SHOWN = 'devicelab:grid-shown';

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

function gatewayOf(device: Device, hubGateway: Map<string, string>): string {
  return (device.usbHubSerialNumber && hubGateway.get(device.usbHubSerialNumber)) || '';
}

export function DeviceGrid({ user }: { user: SessionUser }) {
  const store = useLive();
  const [os, setOs] = useState('');
  const [availability, setAvailability] = useState('');
  const [freeOnly, setFreeOnly] = useState(false);
  const [text, setText] = useState('');
  const [sort, setSort] = useState<SortKey>('name');
  const [thumbnails, setThumbnails] = useState(false);
  // Stills are asked for again every 30 s (one URL per period, so the browser's cache and the hub's answer it).
  const [period, setPeriod] = useState(0);
  useEffect(() => {
    if (!thumbnails) return;
    const timer = setInterval(() => setPeriod(Math.floor(Date.now() / 30_000)), 30_000);
    return () => clearInterval(timer);
  }, [thumbnails]);

  const hubGateway = useMemo(() => {
    const map = new Map<string, string>();
    for (const g of store.gateways.values()) for (const hub of g.usbHubList ?? []) map.set(hub.serialNumber, g.name);
    return map;
  }, [store.version]);

  const devices = useMemo(() => {
    const needle = text.trim().toLowerCase();
    const list = [...store.devices.values()].filter((d) => {
      if (d.deleted) return false;
      if (os && d.operatingSystem !== os) return false;
      if (availability && d.availability !== availability) return false;
      if (freeOnly && readiness(d, user).kind !== 'free') return false;
      if (needle) {
        const hay = `${d.name} ${d.model ?? ''} ${d.friendlyModel ?? ''} ${d.serialNumber ?? ''} ${d.operatingSystemVersion ?? ''} ${d.retainedByDisplayName ?? ''}`.toLowerCase();
        if (!hay.includes(needle)) return false;
      }
      return true;
    });
    const key: Record<SortKey, (d: Device) => string | number> = {
      name: (d) => d.name,
      os: (d) => `${d.operatingSystem} ${d.operatingSystemVersion ?? ''}`,
      state: (d) => readiness(d, user).kind,
      battery: (d) => d.batteryPercentCharged,
      port: (d) => portText(d),
    };
    const k = key[sort];
    return list.sort((a, b) => {
      const x = k(a);
      const y = k(b);
      return typeof x === 'number' && typeof y === 'number' ? x - y : collator.compare(String(x), String(y)) || collator.compare(a.name, b.name);
    });
  }, [store.devicesVersion, os, availability, freeOnly, text, sort]);

  const online = useMemo(() => [...store.devices.values()].filter((d) => d.availability === 'Online').length, [store.devicesVersion]);
  // When the first full grid is on screen (effects run after the paint): the dashboard benchmark reads this mark.
  useEffect(() => {
    if (store.loaded && performance.getEntriesByName(GRID_SHOWN).length === 0) performance.mark(GRID_SHOWN);
  }, [store.loaded]);

  return (
    <main class="page grid-page">
      <div class="toolbar" role="search">
        <label>Search<input type="search" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} placeholder="name, model, serial, user" /></label>
        <label>OS<select value={os} onChange={(e) => setOs((e.target as HTMLSelectElement).value)}>
          <option value="">All</option><option>Android</option><option>iOS</option></select></label>
        <label>Availability<select value={availability} onChange={(e) => setAvailability((e.target as HTMLSelectElement).value)}>
          <option value="">All</option><option>Online</option><option>Offline</option></select></label>
        <label class="check"><input type="checkbox" checked={freeOnly} onChange={(e) => setFreeOnly((e.target as HTMLInputElement).checked)} />Free only</label>
        <label>Sort by<select value={sort} onChange={(e) => setSort((e.target as HTMLSelectElement).value as SortKey)}>
          <option value="name">Name</option><option value="os">OS</option><option value="state">State</option>
          <option value="battery">Battery</option><option value="port">USB port</option></select></label>
        <label class="check"><input type="checkbox" checked={thumbnails} onChange={(e) => setThumbnails((e.target as HTMLInputElement).checked)} />Screens</label>
        <span class="count" aria-live="polite">{devices.length} shown · {online} of {store.devices.size} online</span>
      </div>
      <div class="row head" aria-hidden="true">
        <span>Device</span><span>OS</span><span>State</span><span>Battery</span><span>Gateway · USB</span>
      </div>
      {!store.loaded ? <p class="center">Loading devices…</p> : devices.length === 0 ? <p class="center">No device matches.</p> : (
        <VirtualList items={devices} rowHeight={56} label="Devices" render={(d) => <DeviceRow device={d} user={user} gateway={gatewayOf(d, hubGateway)} thumbnail={thumbnails ? period : undefined} />} />
      )}
    </main>
  );
}

function DeviceRow({ device, user, gateway, thumbnail }: { device: Device; user: SessionUser; gateway: string; thumbnail?: number }) {
  const state = readiness(device, user);
  const href = `/devices/${device.id}`;
  return (
    <a class="row device" href={href} onClick={(e) => linkClick(e, href)} data-device-id={device.id} data-state={state.kind}>
      <span class="name">
        {thumbnail !== undefined && device.availability === 'Online' && <img class="thumb" alt="" loading="lazy" data-testid="thumbnail"
          src={`/apiv1/Device/Screenshot?id=${encodeURIComponent(device.id)}&t=${thumbnail}`}
          onError={(e) => { (e.currentTarget as HTMLImageElement).style.visibility = 'hidden'; }} />}
        <strong>{device.name}</strong><small>{device.friendlyModel ?? device.model ?? ''}</small></span>
      <span>{device.operatingSystem} {device.operatingSystemVersion ?? ''}</span>
      <span class="state-cell" title={state.reason}>
        <span class={`state ${state.kind}`} data-testid="state">{state.text}</span>
        {state.reason && <small data-testid="state-reason">{state.reason}</small>}
      </span>
      <span>{batteryText(device)}</span>
      <span class="muted">{[gateway, portText(device)].filter((x) => x && x !== '—').join(' · ') || '—'}</span>
    </a>
  );
}
