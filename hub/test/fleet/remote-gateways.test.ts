/**
 * The other replicas' gateways as this replica lists them (GET /Service, /Gateway, USB hub commands), on real
 * PostgreSQL: a gateway another replica links shows once its link lock is held and its row says connected; a
 * change notice heard before a request is in that request's list (settled), not a debounce later.
 */
import { createLogger } from '@devicelab/shared';
import pg from 'pg';
import { LockKind } from '../../src/fleet/advisory-locks';
import { RemoteGateways } from '../../src/fleet/remote-gateways';
import { registerGateway } from '../../src/gateways/gateway-tokens';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
let linkConnection: pg.Client;
let remote: RemoteGateways;
/** What the change feed would call on each change notice. */
let notice: () => void = () => undefined;
/** Another replica links the gateway: its link connection holds the gateway's link lock (link-ownership.ts). */
const holdLinkLock = (gatewayId: string) =>
  linkConnection.query('SELECT pg_advisory_lock($1, hashtext($2) & 2147483647)', [LockKind.gatewayLink, gatewayId]);

beforeAll(async () => {
  t = await createTestDatabase();
  linkConnection = new pg.Client({ connectionString: t.url });
  await linkConnection.connect();
  remote = new RemoteGateways(t.db, createLogger('remote-gateways-test', 'silent'));
  await remote.start({ subscribe: (listener) => { notice = () => listener({ seq: '1', kind: 'gateway', objectId: '' }); return () => undefined; } });
});
afterAll(async () => {
  remote?.stop();
  await linkConnection?.end();
  await t?.drop();
});

it('a notice heard before the read is in the list the read gets', async () => {
  await registerGateway(t.db, 'gateway-far');
  const { id } = await t.db.selectFrom('gateways').select('id').where('name', '=', 'gateway-far').executeTakeFirstOrThrow();
  // Another replica links it: it holds the gateway's link lock and the row says connected.
  await holdLinkLock(id);
  await t.db.updateTable('gateways').set({ connected: true, hub_replica: 'another-replica', public_address: '10.0.0.9' })
    .where('id', '=', id).execute();
  expect(remote.list()).toEqual([]);

  notice();
  await remote.settled();
  expect(remote.list()).toEqual([expect.objectContaining({ name: 'gateway-far', hubReplica: 'another-replica', publicAddress: '10.0.0.9' })]);

  // Its link ends (the lock goes with the connection's session): the next notice takes it off the list.
  await linkConnection.query('SELECT pg_advisory_unlock_all()');
  notice();
  await remote.settled();
  expect(remote.list()).toEqual([]);
});

it('settled waits for a read that a notice queued behind a running one', async () => {
  const { id } = await t.db.selectFrom('gateways').select('id').where('name', '=', 'gateway-far').executeTakeFirstOrThrow();
  const running = remote.refresh(); // a read under way (the periodic one) that started before the change
  await holdLinkLock(id);
  notice();
  await remote.settled();
  expect(remote.list().map((g) => g.name)).toEqual(['gateway-far']);
  await running;
});
