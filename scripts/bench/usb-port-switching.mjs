#!/usr/bin/env node
// Drives a running lab's USB hub through the API, as a user would, and prints how long each step took to show:
// a port Off -> the device Offline, Data -> Online again with the same Guid, `id=*` Off / Data for every device,
// and a hub reboot -> the hub away and back by itself.
//   DEVICELAB_URL=http://127.0.0.1:8080 DEVICELAB_ADMIN_TOKEN=<token> node scripts/bench/usb-port-switching.mjs
const base = `${(process.env.DEVICELAB_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '')}/apiv1`;
const auth = `Basic ${Buffer.from(`admin:${process.env.DEVICELAB_ADMIN_TOKEN ?? ''}`).toString('base64')}`;
const api = async (path, method = 'GET') => (await fetch(base + path, { method, headers: { authorization: auth } })).json();
const say = (text) => process.stdout.write(`${text}\n`);

async function timeUntil(probe, what, timeoutMs = 30_000) {
  const started = performance.now();
  while (!(await probe())) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return `${((performance.now() - started) / 1000).toFixed(2)} s`;
}

const devices = await api('/Device');
if (!Array.isArray(devices)) throw new Error(`GET /Device: ${JSON.stringify(devices)}`);
const [gateway] = await api('/Gateway');
const hub = gateway?.usbHubList?.[0];
if (!hub) throw new Error('no USB hub in GET /Gateway (does the lab have one?)');
const device = devices.find((d) => d.usbHubSerialNumber === hub.serialNumber);
if (!device) throw new Error(`no device on hub ${hub.serialNumber}`);
const availability = async () => (await api(`/Device?id=${device.id}`))[0]?.availability;
const onHub = async () => (await api('/Device')).filter((d) => d.usbHubSerialNumber === hub.serialNumber);
const hubErrored = async () => (await api('/Gateway'))[0].usbHubList.find((h) => h.serialNumber === hub.serialNumber).isErrored;

say(`hub ${hub.serialNumber} (${hub.model}, ${hub.devices.length} ports); device ${device.name} on port ${device.usbHubPortNumber}`);
say(`Off     ${JSON.stringify(await api(`/Device/UsbPort?update&id=${device.id}&usbHubPortState=Off`, 'POST'))} -> Offline after ${await timeUntil(async () => (await availability()) === 'Offline', 'Offline')}`);
say(`Sync    ${JSON.stringify(await api(`/Device/UsbPort?update&id=${device.id}&usbHubPortState=sync`, 'POST'))} -> Online after ${await timeUntil(async () => (await availability()) === 'Online', 'Online')}, Guid ${(await api(`/Device?id=${device.id}`))[0].id === device.id ? 'unchanged' : 'CHANGED'}`);
say(`id=* Off  ${JSON.stringify(await api('/Device/UsbPort?update&id=*&usbHubPortState=Off', 'POST'))} -> all ${(await onHub()).length} Offline after ${await timeUntil(async () => (await onHub()).every((d) => d.availability === 'Offline'), 'all Offline')}`);
say(`id=* Data ${JSON.stringify(await api('/Device/UsbPort?update&id=*&usbHubPortState=Data', 'POST'))} -> all Online after ${await timeUntil(async () => (await onHub()).every((d) => d.availability === 'Online'), 'all Online')}`);
say(`reboot  ${JSON.stringify(await api(`/Gateway/UsbHub?action=reboot&id=${hub.serialNumber}`, 'POST'))} -> away after ${await timeUntil(hubErrored, 'the hub away')}, back after ${await timeUntil(async () => !(await hubErrored()), 'the hub back')} more`);
