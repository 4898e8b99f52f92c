import pino from 'pino';
import { ApiFailure, failure, success, UNEXPECTED_ERROR_MESSAGE } from '@devicelab/shared';
import {
  failInterruptedJobs, INVALID_ASYNC_ID, pollAsyncJob, startAsyncJob, timedOut, withDeadline,
} from '../../src/domain/async-jobs';
import { describeService } from '../../src/domain/service';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { createUser, startIdleLinkServer } from './helpers';

let t: TestDatabase;
beforeAll(async () => { t = await createTestDatabase(); });
afterAll(() => t.drop());

describe('async jobs', () => {
  it('running, then complete exactly once, then invalid', async () => {
    const user = await createUser(t.db, 'async1@example.com');
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => { finish = resolve; });
    const job = await startAsyncJob(t.db, user, 'install', async () => { await gate; return success(); });
    expect(job.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await pollAsyncJob(t.db, user, job.id)).toEqual({ isComplete: false });
    finish();
    await job.done;
    expect(await pollAsyncJob(t.db, user, job.id)).toEqual({ isComplete: true, data: { isSuccess: true } });
    await expect(pollAsyncJob(t.db, user, job.id)).rejects.toThrow(ApiFailure);
  });

  it('a thrown ApiFailure becomes a failure Result; other users and unknown ids are invalid', async () => {
    const user = await createUser(t.db, 'async2@example.com');
    const other = await createUser(t.db, 'async3@example.com');
    const job = await startAsyncJob(t.db, user, 'install', async () => { throw new ApiFailure('nope'); });
    await job.done;
    await expect(pollAsyncJob(t.db, other, job.id)).rejects.toThrow(ApiFailure);
    expect(await pollAsyncJob(t.db, user, job.id)).toEqual({ isComplete: true, data: failure('nope') });
    await expect(pollAsyncJob(t.db, user, '7c9e6679-7425-40de-944b-e07fc1f90ae7')).rejects.toThrow(ApiFailure);
  });

  it('an unexpected error is logged with its stack and answered with the generic text, never its own', async () => {
    const user = await createUser(t.db, 'async7@example.com');
    const logged: unknown[] = [];
    const logger = pino({ level: 'error', hooks: { logMethod(args, method) { logged.push(args[0]); method.apply(this, args); } } },
      { write: () => undefined });
    const job = await startAsyncJob(t.db, user, 'install', async () => {
      throw new Error('connect ECONNREFUSED /var/lib/devicelab/secret.sock');
    }, { logger });
    await job.done;
    const polled = await pollAsyncJob(t.db, user, job.id);
    expect(polled).toEqual({ isComplete: true, data: failure(UNEXPECTED_ERROR_MESSAGE) });
    expect(JSON.stringify(polled)).not.toContain('ECONNREFUSED');
    expect(logged).toEqual([{ err: expect.objectContaining({ stack: expect.stringContaining('ECONNREFUSED') }) }]);
  });

  it('expires 5 minutes after the last poll or completion', async () => {
    const user = await createUser(t.db, 'async4@example.com');
    let now = new Date();
    const clock = () => now;
    const job = await startAsyncJob(t.db, user, 'upload', async () => ({ id: 'x' }), { clock });
    await job.done;
    now = new Date(now.getTime() + 4 * 60_000);
    const kept = await startAsyncJob(t.db, user, 'upload', async () => ({ id: 'y' }), { clock });
    await kept.done;
    now = new Date(now.getTime() + 2 * 60_000);
    await expect(pollAsyncJob(t.db, user, job.id, { clock })).rejects.toThrow(ApiFailure);
    expect(await pollAsyncJob(t.db, user, kept.id, { clock })).toEqual({ isComplete: true, data: { id: 'y' } });
  });

  it('a running job stays valid while polled within 5 minutes, and is invalid after 5 minutes unpolled', async () => {
    const user = await createUser(t.db, 'async6@example.com');
    let now = new Date();
    const clock = () => now;
    const running = () => new Promise<unknown>(() => undefined);
    const polled = await startAsyncJob(t.db, user, 'install', running, { clock });
    const forgotten = await startAsyncJob(t.db, user, 'install', running, { clock });
    for (let i = 0; i < 3; i++) {
      now = new Date(now.getTime() + 4 * 60_000);
      expect(await pollAsyncJob(t.db, user, polled.id, { clock })).toEqual({ isComplete: false });
    }
    // 12 minutes after the start: the polled job is alive, the other one expired long ago.
    await expect(pollAsyncJob(t.db, user, forgotten.id, { clock })).rejects.toThrow(INVALID_ASYNC_ID);
    now = new Date(now.getTime() + 5 * 60_000 + 1000);
    await expect(pollAsyncJob(t.db, user, polled.id, { clock })).rejects.toThrow(INVALID_ASYNC_ID);
  });

  it('a job that never finishes completes at its deadline with a failure saying it timed out', async () => {
    const user = await createUser(t.db, 'async-deadline@example.com');
    const job = await startAsyncJob(t.db, user, 'install', () => new Promise(() => undefined), { timeoutMs: 300 });
    expect(await pollAsyncJob(t.db, user, job.id)).toEqual({ isComplete: false });
    await job.done;
    expect(await pollAsyncJob(t.db, user, job.id)).toEqual({ isComplete: true, data: failure(timedOut(300)) });
    expect(timedOut(300)).toBe('The operation timed out: it did not complete within 0.3 s.');
  });

  it('wait=true work (withDeadline) ends at the deadline too; work that finishes in time is kept', async () => {
    await expect(withDeadline(() => new Promise(() => undefined), 200)).rejects.toThrow(timedOut(200));
    expect(await withDeadline(async () => 'done', 200)).toBe('done');
  });

  it('jobs interrupted by a restart complete with a failure', async () => {
    const user = await createUser(t.db, 'async5@example.com');
    const job = await startAsyncJob(t.db, user, 'install', () => new Promise(() => undefined));
    expect(await failInterruptedJobs(t.db)).toBeGreaterThanOrEqual(1);
    const polled = await pollAsyncJob(t.db, user, job.id);
    expect(polled).toMatchObject({ isComplete: true, data: { isSuccess: false } });
  });
});

describe('service', () => {
  // A hub with connected gateways is described end to end (e2e/walking-skeleton.test.ts).
  it('describes the hub: its node id, version and both clocks', async () => {
    const link = await startIdleLinkServer(t.db);
    try {
      const info = describeService(link.directory, { serviceNodeId: 'node-1', serviceVersion: '0.1.0' }, [],
        new Date('2024-01-02T03:04:05.678Z'));
      expect(info).toMatchObject({ ServiceNodeId: 'node-1', ServiceVersion: '0.1.0', systemDateTimeUtc: '2024-01-02T03:04:05Z',
        deviceGatewayInformation: [] });
      expect(info.systemDateTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
    } finally {
      await link.stop();
    }
  });
});
