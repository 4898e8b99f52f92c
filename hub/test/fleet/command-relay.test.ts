/**
 * The command relay between replicas, on real PostgreSQL (two replicas in one process, each with its own registry
 * connection): a command reaches the owner and its answer (bytes included) comes back; the owner is given what
 * is left of the deadline and the requester gives up at it; a dead owner fails the command at once as
 * GatewayUnavailable; rows are gone afterwards in every case.
 */
import { randomUUID } from 'node:crypto';
import { createLogger } from '@devicelab/shared';
import { CommandRelay, type RelayExecutor } from '../../src/fleet/command-relay';
import { isReplicaLive, liveReplicas, ReplicaRegistry } from '../../src/fleet/replica-registry';
import { GatewayUnavailableError } from '../../src/gateways/gateway-directory';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const logger = createLogger('relay-test', 'silent');
let t: TestDatabase;
const registries: ReplicaRegistry[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  for (const registry of registries) await registry.stop();
  await t.drop();
});

async function replica(execute: RelayExecutor = async () => undefined) {
  const registry = new ReplicaRegistry(t.db, t.url, 'test', logger,
    { id: randomUUID(), hostname: 'test-host', startedAt: new Date() });
  await registry.start();
  registries.push(registry);
  const relay = new CommandRelay(t.db, registry, execute, { retention: () => undefined, metricsSettings: () => undefined }, logger);
  return { registry, relay, id: registry.replica.id };
}

const rows = async () => (await t.db.selectFrom('relayed_commands').select('id').execute()).length;

it('runs the command on the owner and brings its answer back, bytes intact; the row is deleted', async () => {
  const seen: { kind: string; target: string; request: unknown; timeoutMs: number }[] = [];
  const owner = await replica(async (kind, target, request, timeoutMs) => {
    seen.push({ kind, target, request, timeoutMs });
    return { commandId: 'c1', ok: true, output: 'done', data: Buffer.from([0, 1, 2, 255]) };
  });
  const requester = await replica();
  const answer = await requester.relay.request(owner.id, 'command', 'SERIAL1',
    { action: 'reboot', reboot: {}, blob: Buffer.from('abc') }, 10_000);
  expect(answer).toEqual({ commandId: 'c1', ok: true, output: 'done', data: Buffer.from([0, 1, 2, 255]) });
  expect(seen).toHaveLength(1);
  expect(seen[0]).toMatchObject({ kind: 'command', target: 'SERIAL1', request: { action: 'reboot', blob: Buffer.from('abc') } });
  expect(seen[0].timeoutMs).toBeLessThanOrEqual(10_000); // what is left of the requester's deadline
  expect(seen[0].timeoutMs).toBeGreaterThan(0);
  expect(await waitForZeroRows()).toBe(0);
});

it('passes on the owner\'s GatewayUnavailable as GatewayUnavailable', async () => {
  const owner = await replica(async () => {
    throw new GatewayUnavailableError('Gateway lab-b did not answer within 5 ms.');
  });
  const requester = await replica();
  const failure = requester.relay.request(owner.id, 'usbHubCommand', 'HUB1', { action: 'rebootUsbHub' }, 10_000);
  await expect(failure).rejects.toBeInstanceOf(GatewayUnavailableError);
  await expect(failure).rejects.toThrow('did not answer within 5 ms');
  expect(await waitForZeroRows()).toBe(0);
});

it('gives up at the deadline when the owner does not answer; the row is deleted', async () => {
  const owner = await replica(() => new Promise(() => undefined)); // a gateway that never answers
  const requester = await replica();
  const failure = requester.relay.request(owner.id, 'command', 'SERIAL2', { action: 'reboot' }, 300);
  await expect(failure).rejects.toBeInstanceOf(GatewayUnavailableError);
  await expect(failure).rejects.toThrow('did not answer within 300 ms');
  expect(await waitForZeroRows()).toBe(0);
});

it('fails at once, long before the deadline, when the owner replica dies; the row is deleted', async () => {
  let started!: () => void;
  const running = new Promise<void>((resolve) => { started = resolve; });
  const owner = await replica(() => {
    started();
    return new Promise(() => undefined);
  });
  const requester = await replica();
  expect(await isReplicaLive(t.db, owner.id)).toBe(true);
  const failure = requester.relay.request(owner.id, 'command', 'SERIAL3', { action: 'reboot' }, 600_000);
  failure.catch(() => undefined);
  await running;
  await owner.registry.stop(); // its connection closes: the liveness lock is free, as when the process dies
  expect(await isReplicaLive(t.db, owner.id)).toBe(false);
  await expect(failure).rejects.toThrow(new GatewayUnavailableError(`Hub replica ${owner.id}, which held the gateway's link, is gone.`));
  expect(await waitForZeroRows()).toBe(0);
  expect((await liveReplicas(t.db)).map((r) => r.id)).not.toContain(owner.id);
}, 30_000);

it('refuses a relay to a replica that is not there', async () => {
  const requester = await replica();
  await expect(requester.relay.request(randomUUID(), 'accessPort', 'SERIAL4', { retainId: 'r' }, 600_000))
    .rejects.toBeInstanceOf(GatewayUnavailableError);
  expect(await waitForZeroRows()).toBe(0);
}, 30_000);

/** Row deletion is fire-and-forget behind the answer: wait for it (bounded) rather than for a fixed time. */
async function waitForZeroRows(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const count = await rows();
    if (count === 0) return 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return rows();
}
