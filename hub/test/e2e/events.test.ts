/**
 * Events end to end: a whole lab (hub, gateway, simulated Android devices over the real adb server). What the
 * hub records when devices come online and when a user retains and releases one is read back through the
 * report endpoints, as an operator would.
 */
import { startTestLab, type TestLab } from '../support/lab';

let lab: TestLab;
let startedAt: Date;
/** The hub's clock runs ahead of the system's by this much: a test moves it instead of sleeping. */
let ahead = 0;
const hubNow = () => new Date(Date.now() + ahead);
const admin = () => lab.admin;
/** Report bodies are checked field by field. */
const get = async (p: string): Promise<any> => (await lab.api(admin(), p)).json();
const post = async (body: string) => (await lab.api(admin(), '/Device', {
  method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' },
})).text();

beforeAll(async () => {
  startedAt = new Date(Date.now() - 1000);
  lab = await startTestLab({ androidCount: 2, clock: hubNow });
}, 90_000);
afterAll(() => lab?.stop(), 60_000);

interface WireEvent { eventType: string; message: string; deviceId?: string; userId?: string; deviceOnlineCount: number; deviceInuseCount: number }

it('the hub start and each device coming online are in the history, with lab-wide online counts', async () => {
  const all = await get('/Report/History');
  const events: WireEvent[] = all.events;
  expect(events.filter((e) => e.eventType === 'ServerStarting').map((e) => e.message)).toEqual(['Server Starting']);
  expect(events.some((e) => e.eventType === 'ServerRestarting')).toBe(false);
  const online = events.filter((e) => e.message === 'Device Online').reverse(); // oldest first
  expect(online.map((e) => e.deviceOnlineCount)).toEqual([1, 2]);
  for (const spec of lab.devices) {
    const own: WireEvent[] = (await get(`/Report/History?deviceId=${spec.serial}`)).events;
    expect(own.map((e) => [e.eventType, e.message])).toContainEqual(['DeviceAvailability', 'Device Online']);
  }
});

it('retain and release show in History and Usage and move the in-use count of the timeline', async () => {
  const serial = lab.devices[0].serial;
  expect(await post(`action=Retain&id=${serial}`)).toMatch(/^\{"isSuccess":true,"data":\{"authenticator":"/);

  const retained: WireEvent = (await get(`/Report/History?deviceId=${serial}&take=1`)).events[0];
  expect(retained).toMatchObject({ eventType: 'DeviceRetained', message: 'Device Retained', deviceInuseCount: 1, deviceOnlineCount: 2 });
  const open = (await get(`/Report/Usage?deviceId=${serial}`)).deviceUsage;
  expect(open).toHaveLength(1);
  expect(open[0]).toMatchObject({ eventType: 'DeviceRetained', isDirty: true, performedByName: 'admin', operatingSystem: 'Android' });
  expect(open[0].endDate).toBeUndefined();

  ahead += 1100; // the retain lasts a little over a second
  expect(await post(`action=Release&id=${serial}`)).toBe('{"isSuccess":true}');
  const released: WireEvent = (await get(`/Report/History?deviceId=${serial}&take=1`)).events[0];
  expect(released).toMatchObject({ message: 'Device Released', deviceInuseCount: 0, userId: retained.userId });
  const closed = (await get(`/Report/Usage?deviceId=${serial}&userId=${retained.userId}`)).deviceUsage;
  expect(closed).toHaveLength(1);
  expect(closed[0].isDirty).toBe(false);
  expect(closed[0].duration).toBeGreaterThanOrEqual(1);
  expect(typeof closed[0].endDate).toBe('string');

  const timeline = await get(`/Report/Availability?fromDate=${encodeURIComponent(startedAt.toISOString())}&window=00:00:01`);
  expect(timeline.isSuccess).toBe(true);
  expect(Math.max(...timeline.data.map((s: { inUse: number }) => s.inUse))).toBe(1);
  expect(Math.max(...timeline.data.map((s: { online: number }) => s.online))).toBe(2);
  // After the release (the state carried into the range), nobody holds a device.
  const afterRelease = hubNow();
  ahead += 1100;
  const later = await get(`/Report/Availability?fromDate=${encodeURIComponent(afterRelease.toISOString())}&window=00:00:01`);
  expect(later.data.length).toBeGreaterThanOrEqual(1);
  for (const sample of later.data) expect(sample).toMatchObject({ online: 2, inUse: 0 });
});
