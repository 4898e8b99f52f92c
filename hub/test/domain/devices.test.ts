import { ApiFailure } from '@devicelab/shared';
import { releaseDevice, rebootDevice, retainDevice, readDeviceLog } from '../../src/domain/device-actions';
import { decodeDeviceTicket } from '@devicelab/proto';
import { newTicketKeys } from '../../src/domain/device-ticket';
import { resolveDevice } from '../../src/domain/device-queries';
import { listAvailableDevices, listDevices } from '../../src/domain/devices';
import { sql } from 'kysely';
import pg from 'pg';
import { RELAY_CHANNEL } from '../../src/fleet/replica-registry';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { waitFor } from '../support/lab';
import { ALL, createUser, insertDevice, startIdleLinkServer } from './helpers';

const KEYS = newTicketKeys();
let t: TestDatabase;
beforeAll(async () => { t = await createTestDatabase({ maxConnections: 10 }); });
afterAll(() => t.drop());

const message = (p: Promise<unknown>) => p.then(() => 'resolved', (e) => (e instanceof ApiFailure ? e.message : `ERR ${e}`));

describe('device listing', () => {
  it('filters, hides without DeviceList and serves the Python monitor query', async () => {
    const user = await createUser(t.db, 'lister@example.com');
    const blind = await createUser(t.db, 'blind@example.com', ['DeviceConnect']);
    const off = await insertDevice(t.db, { name: 'OffOne', availability: 'Offline', slot_number: 77 });
    const on = await insertDevice(t.db, { name: 'OnOne', operating_system: 'iOS' });
    const offDisabled = await insertDevice(t.db, { name: 'OffDis', availability: 'Offline', enabled: false });
    expect(await listDevices(t.db, blind, {})).toEqual([]);
    const monitor = await listDevices(t.db, user, { enabled: true, availability: 'Offline' });
    expect(monitor.map((d) => d.id)).toContain(off.id);
    expect(monitor.map((d) => d.id)).not.toContain(offDisabled.id);
    expect(monitor.map((d) => d.id)).not.toContain(on.id);
    expect((await listDevices(t.db, user, { slotNumber: 77 })).map((d) => d.name)).toEqual(['OffOne']);
    expect((await listDevices(t.db, user, { name: 'onone' })).map((d) => d.id)).toEqual([on.id]);
    expect((await listDevices(t.db, user, { operatingSystem: 'iOS', id: on.id })).length).toBe(1);
    const [mapped] = await listDevices(t.db, user, { id: off.id });
    expect(mapped).toMatchObject({ name: 'OffOne', availability: 'Offline', enabled: true, slotNumber: 77 });
    expect(mapped.properties).toBeUndefined();
    expect('retainedById' in mapped && mapped.retainedById !== undefined).toBe(false);
  });

  it('maps properties and installed applications on request', async () => {
    const user = await createUser(t.db, 'apps@example.com');
    const app = await t.db.insertInto('applications').values({
      display_name: 'Managed', application_identifier: 'com.managed', version: '1.0', build_version: '1',
      operating_system: 'Android', blob_sha256: 'a'.repeat(64), file_name: 'm.apk', file_byte_count: '10',
      version_counter: 1,
    }).returningAll().executeTakeFirstOrThrow();
    const d = await insertDevice(t.db, {
      properties: JSON.stringify([{ name: 'ro.product.model', value: 'Pixel' }]) as never,
      installed_packages: JSON.stringify([
        { identifier: 'com.managed', version: '1.0', buildVersion: '1', system: false },
        { identifier: 'com.other', version: '2', buildVersion: '3', system: true },
      ]) as never,
    });
    const [withProps] = await listDevices(t.db, user, { id: d.id }, { properties: true });
    expect(withProps.properties).toEqual([{ name: 'ro.product.model', value: 'Pixel', type: 'System' }]);
    const [managed] = await listDevices(t.db, user, { id: d.id }, { applications: true });
    expect(managed.installedApplications?.map((a) => a.id)).toEqual([app.id]);
    const [all] = await listDevices(t.db, user, { id: d.id }, { allApplications: true });
    expect(all.installedApplications?.map((a) => a.id)).toEqual([app.id, '00000000-0000-0000-0000-000000000000']);
    expect(all.installedApplications?.[1]).toMatchObject({ applicationIdentifier: 'com.other', version: '2' });
  });

  it('Available leaves out retained, disabled, deleted and offline devices', async () => {
    const user = await createUser(t.db, 'avail@example.com');
    const free = await insertDevice(t.db);
    const retained = await insertDevice(t.db, { retained_by: user.id });
    const disabled = await insertDevice(t.db, { enabled: false });
    const deleted = await insertDevice(t.db, { deleted: true });
    const offline = await insertDevice(t.db, { availability: 'Offline' });
    const ids = (await listAvailableDevices(t.db, user)).map((d) => d.id);
    expect(ids).toContain(free.id);
    for (const d of [retained, disabled, deleted, offline]) expect(ids).not.toContain(d.id);
  });

  it('resolves a device by Guid, serial number or vendor id', async () => {
    const d = await insertDevice(t.db, { vendor_unique_identifier: 'VUID-1', serial_number: 'SERIAL-1' });
    expect((await resolveDevice(t.db, d.id.toUpperCase())).id).toBe(d.id);
    expect((await resolveDevice(t.db, 'SERIAL-1')).id).toBe(d.id);
    expect((await resolveDevice(t.db, 'VUID-1')).id).toBe(d.id);
    expect(await message(resolveDevice(t.db, 'nope'))).toBe("Device 'nope' not found.");
  });
});

describe('retain and release', () => {
  it('retains with a signed ticket, again for the same user, and refuses another user', async () => {
    const gw = await t.db.insertInto('gateways').values({ name: 'gw-ret', token_sha256: Buffer.alloc(32),
      public_address: '10.0.0.5', public_port: 8080 }).returning('id').executeTakeFirstOrThrow();
    const alice = await createUser(t.db, 'alice@example.com', ALL, { first: 'Alice', last: 'A' });
    const bob = await createUser(t.db, 'bob@example.com', ['DeviceConnect', 'DeviceList']);
    const d = await insertDevice(t.db, { name: 'Pixel R', gateway_id: gw.id });
    const ticket = await retainDevice(t.db, alice, d.serial_number!, { ticketKeys: KEYS });
    expect(ticket).toMatchObject({ gatewayAddress: '10.0.0.5', gatewayPort: 8080,
      deviceVendorUniqueIdentifier: d.vendor_unique_identifier, serialNumber: d.serial_number });
    // Signature checks by a gateway: hub/test/domain/tickets.test.ts (end to end).
    expect(decodeDeviceTicket(ticket.authenticator)?.claims).toMatchObject({ device: d.id, user: alice.id });
    expect((await retainDevice(t.db, alice, d.id, { ticketKeys: KEYS })).authenticator).toBe(ticket.authenticator);
    expect(await message(retainDevice(t.db, bob, d.id, { ticketKeys: KEYS })))
      .toBe("Device 'Pixel R' is in use by 'alice@example.com'.");
    expect(await message(releaseDevice(t.db, bob, d.id))).toBe("Device 'Pixel R' is in use by 'alice@example.com'.");
    const [listed] = await listDevices(t.db, alice, { id: d.id });
    expect(listed).toMatchObject({ retainedById: alice.id, retainedByDisplayName: 'Alice A',
      retainedByUserName: 'alice@example.com' });
    expect(listed.lastInuseAt).toBeDefined();
    await releaseDevice(t.db, alice, d.id);
    await releaseDevice(t.db, bob, d.id); // not retained: success
    const events = await t.db.selectFrom('events').select(['event_type', 'message']).where('device_id', '=', d.id)
      .orderBy('event_date').execute();
    expect(events).toEqual([
      { event_type: 'DeviceRetained', message: 'Device Retained' },
      { event_type: 'DeviceRetained', message: 'Device Released' },
    ]);
  });

  it('DeviceReleaseAny releases another user\'s retain', async () => {
    const owner = await createUser(t.db, 'owner@example.com');
    const admin = await createUser(t.db, 'releaser@example.com', ['DeviceReleaseAny']);
    const d = await insertDevice(t.db, { retained_by: owner.id, retained_at: new Date() });
    await releaseDevice(t.db, admin, d.id);
    const row = await t.db.selectFrom('devices').select('retained_by').where('id', '=', d.id).executeTakeFirstOrThrow();
    expect(row.retained_by).toBeNull();
  });

  it('checks the entitlement before the device exists, and the device state', async () => {
    const none = await createUser(t.db, 'none@example.com', []);
    const user = await createUser(t.db, 'state@example.com');
    expect(await message(retainDevice(t.db, none, 'no-such-device', { ticketKeys: KEYS })))
      .toBe('User does not have required entitlement: DeviceConnect');
    const offline = await insertDevice(t.db, { availability: 'Offline' });
    const disabled = await insertDevice(t.db, { enabled: false });
    const deleted = await insertDevice(t.db, { deleted: true });
    expect(await message(retainDevice(t.db, user, offline.id, { ticketKeys: KEYS }))).toBe('Device is offline.');
    expect(await message(retainDevice(t.db, user, disabled.id, { ticketKeys: KEYS }))).toBe('Device is disabled.');
    expect(await message(retainDevice(t.db, user, deleted.id, { ticketKeys: KEYS }))).toBe('Device is deleted.');
  });

  it('names an unknown device in one statement, and tells the gateway each retain and the release with the retainer\'s keys', async () => {
    const user = await createUser(t.db, 'keys@example.com');
    expect(await message(retainDevice(t.db, user, ' no-such-device ', { ticketKeys: KEYS }))).toBe("Device 'no-such-device' not found.");
    expect(await message(releaseDevice(t.db, user, 'no-such-device'))).toBe("Device 'no-such-device' not found.");
    await t.db.insertInto('user_adb_keys').values({ user_id: user.id, fingerprint: 'fp-1', key: Buffer.from('public key bytes'),
      comment: 'laptop' }).execute();
    const d = await insertDevice(t.db);
    const told: unknown[] = [];
    const gateways = { notifyRetention: (r: unknown) => told.push(r), accessPort: async () => undefined };
    await retainDevice(t.db, user, d.id, { ticketKeys: KEYS, gateways });
    const { retain_id: retainId } = await t.db.selectFrom('devices').select('retain_id').where('id', '=', d.id).executeTakeFirstOrThrow();
    await retainDevice(t.db, user, d.id, { ticketKeys: KEYS, gateways }); // the same retain, told again
    await releaseDevice(t.db, user, d.id, { gateways });
    await releaseDevice(t.db, user, d.id, { gateways }); // nobody retains it: nothing to tell
    const retained = { vendorUniqueIdentifier: d.vendor_unique_identifier, retainId, userId: user.id, userLogin: 'keys@example.com',
      adbKeys: [{ key: Buffer.from('public key bytes'), fingerprint: 'fp-1', comment: 'laptop' }] };
    expect(told).toEqual([retained, retained, { vendorUniqueIdentifier: d.vendor_unique_identifier, retainId: '' }]);
    const markers = await t.db.selectFrom('metrics.markers' as never).selectAll().where('device_id' as never, '=', d.id as never)
      .execute() as unknown as { name: string; started_by: string; stopped_at: Date | null }[];
    expect(markers).toEqual([expect.objectContaining({ name: 'session', started_by: user.id, stopped_at: expect.any(Date) })]);
  });

  it('a retain and a release tell the other hub replicas themselves, at commit; a refused one tells nobody', async () => {
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    const heard: unknown[] = [];
    listener.on('notification', (n) => { if (n.channel === RELAY_CHANNEL) heard.push(JSON.parse(n.payload ?? '')); });
    await listener.query(`LISTEN ${RELAY_CHANNEL}`);
    try {
      const [a, b] = [await createUser(t.db, 'relay-a@example.com'), await createUser(t.db, 'relay-b@example.com')];
      const d = await insertDevice(t.db);
      const told: [unknown, boolean | undefined][] = [];
      const gateways = { replicaId: 'replica-1', notifyRetention: (r: unknown, othersTold?: boolean) => told.push([r, othersTold]),
        accessPort: async () => undefined };
      const notice = { type: 'retention', from: 'replica-1', vendorUniqueIdentifier: d.vendor_unique_identifier };
      await retainDevice(t.db, a, d.id, { ticketKeys: KEYS, gateways });
      // Heard by the time the retain answers: NOTIFY is delivered at commit, before the function's result.
      await waitFor(async () => heard.length === 1, 5000, 'the retain notice');
      expect(heard).toEqual([notice]);
      expect(await message(retainDevice(t.db, b, d.id, { ticketKeys: KEYS, gateways }))).toMatch(/in use/);
      await retainDevice(t.db, a, d.id, { ticketKeys: KEYS, gateways }); // unchanged: told by the hub, as before
      await releaseDevice(t.db, a, d.id, { gateways });
      await waitFor(async () => heard.length === 2, 5000, 'the release notice');
      expect(heard).toEqual([notice, notice]);
      expect(told.map(([, othersTold]) => othersTold)).toEqual([true, false, true]);
    } finally {
      await listener.end();
    }
  });

  it('the lab counts a retain or release event records are those of the devices at that moment (lab_counts over device_tallies)', async () => {
    const user = await createUser(t.db, 'tally@example.com');
    const direct = async () => {
      const { rows } = await sql<{ online: number; inuse: number }>`SELECT
        count(*) FILTER (WHERE availability = 'Online' AND NOT deleted)::int AS online,
        count(*) FILTER (WHERE retained_by IS NOT NULL AND NOT deleted)::int AS inuse FROM devices`.execute(t.db);
      return rows[0];
    };
    const recorded = async (deviceId: string) => {
      const event = await t.db.selectFrom('events').select(['device_online_count', 'device_inuse_count'])
        .where('device_id', '=', deviceId).where('event_type', '=', 'DeviceRetained').orderBy('seq', 'desc').executeTakeFirstOrThrow();
      return { online: event.device_online_count, inuse: event.device_inuse_count };
    };
    const [a, b, c, d] = [await insertDevice(t.db), await insertDevice(t.db), await insertDevice(t.db), await insertDevice(t.db)];
    await retainDevice(t.db, user, a.id, { ticketKeys: KEYS });
    expect(await recorded(a.id)).toEqual(await direct());
    // Every way a count changes: Offline, deleted (while retained), Online again, removed outright, released.
    await t.db.updateTable('devices').set({ availability: 'Offline' }).where('id', '=', b.id).execute();
    await retainDevice(t.db, user, c.id, { ticketKeys: KEYS });
    await t.db.updateTable('devices').set({ deleted: true }).where('id', '=', c.id).execute();
    await t.db.deleteFrom('devices').where('id', '=', d.id).execute();
    await retainDevice(t.db, user, b.id, { ticketKeys: KEYS }).catch(() => undefined); // Offline: refused, no event
    await releaseDevice(t.db, user, a.id);
    expect(await recorded(a.id)).toEqual(await direct());
    await t.db.updateTable('devices').set({ availability: 'Online' }).where('id', '=', b.id).execute();
    await retainDevice(t.db, user, b.id, { ticketKeys: KEYS });
    expect(await recorded(b.id)).toEqual(await direct());
  });

  it('two concurrent retains: exactly one wins, 100 times over', async () => {
    const a = await createUser(t.db, 'race-a@example.com');
    const b = await createUser(t.db, 'race-b@example.com');
    for (let i = 0; i < 100; i++) {
      const d = await insertDevice(t.db);
      const outcomes = await Promise.allSettled([
        retainDevice(t.db, a, d.id, { ticketKeys: KEYS }),
        retainDevice(t.db, b, d.id, { ticketKeys: KEYS }),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const rejected = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect(rejected.reason).toBeInstanceOf(ApiFailure);
      expect(rejected.reason.message).toMatch(/^Device '.*' is in use by 'race-[ab]@example\.com'\.$/);
    }
  });
});

describe('reboot', () => {
  // Reboots that reach a device are tested end to end (e2e/walking-skeleton.test.ts).
  it('a reboot that cannot reach the device restores its state; missing entitlement comes first', async () => {
    const link = await startIdleLinkServer(t.db);
    try {
      const user = await createUser(t.db, 'reboot2@example.com');
      const tester = await createUser(t.db, 'reboot3@example.com', ['DeviceList']);
      const d = await insertDevice(t.db, { name: 'Far Away' });
      expect(await message(rebootDevice(t.db, link.directory, user, d.id)))
        .toBe(`Device 'Far Away' is not reachable: No connected gateway holds device ${d.vendor_unique_identifier}.`);
      const row = await t.db.selectFrom('devices').select(['readiness', 'availability']).where('id', '=', d.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ readiness: 'Ready', availability: 'Online' });
      expect(await message(rebootDevice(t.db, link.directory, tester, 'unknown')))
        .toBe('User does not have required entitlement: DeviceReboot');
    } finally {
      await link.stop();
    }
  });
});
