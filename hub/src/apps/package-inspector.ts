/**
 * Reads uploaded packages out of the request path: each parse runs in a worker thread with a heap cap
 * (`resourceLimits`) and a deadline, so an exception, an endless loop or an out-of-memory inside a parser ends
 * that worker only and becomes a failure Result. Workers are reused while healthy (a few at most, idle ones
 * end after a while); one that timed out or died is never reused.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ApiFailure, type DeviceOperatingSystem, type Logger } from '@devicelab/shared';
import type { AppMetadata } from './app-metadata';
import type { InspectReply, InspectRequest } from './package-worker';
import type { ZipLimits } from './zip-integrity';

export interface PackageInspectionLimits extends ZipLimits {
  /** A parse that takes longer is abandoned (its worker terminated). */
  timeoutMs: number;
  /** Heap cap of a worker (old generation), in MB. */
  heapMb: number;
  /** Parses at once; more wait their turn. */
  workers: number;
  /** Parses of one user waiting or running at once; more are refused (try again later). */
  maxPerUser: number;
  /** Parses waiting for a worker, all users together; more are refused. */
  maxWaiting: number;
}

const IDLE_WORKER_MS = 30_000;

interface Job {
  /** Who uploaded the package (parses are bounded per user). */
  owner: string;
  request: InspectRequest;
  resolve(metadata: AppMetadata): void;
  reject(err: Error): void;
}

export class PackageInspector {
  private readonly idle: { worker: Worker; timer: NodeJS.Timeout }[] = [];
  private readonly queue: Job[] = [];
  private busy = 0;
  /** Parses waiting or running, per owner. */
  private readonly pending = new Map<string, number>();
  private stopped = false;

  constructor(private readonly limits: PackageInspectionLimits, private readonly logger?: Logger) {}

  /**
   * The package's metadata; a package that is invalid, too large or too slow to read is an ApiFailure, and so is
   * one beyond the owner's or the hub's share of the queue (without waiting: the caller tries again later).
   */
  inspect(file: string, operatingSystem: DeviceOperatingSystem, owner: string, now: Date = new Date()): Promise<AppMetadata> {
    if (this.stopped) return Promise.reject(new ApiFailure('The hub is stopping; upload the file again later.'));
    const mine = this.pending.get(owner) ?? 0;
    if (mine >= this.limits.maxPerUser) {
      return Promise.reject(new ApiFailure(`${mine} of your uploads are being read, the most one user may have at `
        + 'once; upload this file again when one of them is done.'));
    }
    if (this.queue.length >= this.limits.maxWaiting) {
      return Promise.reject(new ApiFailure(`The hub has ${this.queue.length} uploads waiting to be read, the most it `
        + 'queues; upload the file again later.'));
    }
    this.pending.set(owner, mine + 1);
    const { timeoutMs: _t, heapMb: _h, workers: _w, maxPerUser: _u, maxWaiting: _q, ...zipLimits } = this.limits;
    const done = () => {
      const left = (this.pending.get(owner) ?? 1) - 1;
      if (left > 0) this.pending.set(owner, left);
      else this.pending.delete(owner);
    };
    return new Promise<AppMetadata>((resolve, reject) => {
      this.queue.push({ owner, request: { file, operatingSystem, limits: zipLimits, now }, resolve, reject });
      this.next();
    }).finally(done);
  }

  /** Ends every worker; parses still queued fail. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const job of this.queue.splice(0)) job.reject(new ApiFailure('The hub is stopping; upload the file again later.'));
    await Promise.all(this.idle.splice(0).map(({ worker, timer }) => {
      clearTimeout(timer);
      return worker.terminate();
    }));
  }

  private next(): void {
    if (this.busy >= this.limits.workers || this.queue.length === 0) return;
    const job = this.queue.shift()!;
    this.busy++;
    const reused = this.idle.pop();
    if (reused) clearTimeout(reused.timer);
    this.run(reused?.worker ?? this.startWorker(), job).then((worker) => {
      this.busy--;
      if (worker && !this.stopped) this.park(worker);
      else if (worker) void worker.terminate();
      this.next();
    });
  }

  /** Runs one job; resolves with the worker when it can be reused, else undefined (it was terminated or died). */
  private run(worker: Worker, job: Job): Promise<Worker | undefined> {
    const kind = job.request.operatingSystem === 'Android' ? 'APK' : 'IPA';
    return new Promise((settled) => {
      const finish = (outcome: { reply?: InspectReply; failure?: string; reusable: boolean }) => {
        clearTimeout(deadline);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        if (outcome.reply?.ok) job.resolve(outcome.reply.metadata);
        else job.reject(new ApiFailure(outcome.reply?.message ?? outcome.failure!));
        if (outcome.reusable) settled(worker);
        else void worker.terminate().then(() => settled(undefined), () => settled(undefined));
      };
      const onMessage = (reply: InspectReply) => finish({ reply, reusable: true });
      const onError = (err: Error & { code?: string }) => {
        this.logger?.warn({ err, file: path.basename(job.request.file) }, 'package worker failed');
        finish({ reusable: false, failure: err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `The upload is not a valid ${kind}: reading it needs more than the limit of ${this.limits.heapMb} MB of memory.`
          : `The upload is not a valid ${kind}: reading it failed (${err.message}).` });
      };
      const onExit = () => finish({ reusable: false, failure: `The upload is not a valid ${kind}: reading it failed.` });
      const deadline = setTimeout(() => finish({ reusable: false,
        failure: `The upload could not be read within the limit of ${this.limits.timeoutMs / 1000} s; it was not stored.` }),
      this.limits.timeoutMs);
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage(job.request);
    });
  }

  private park(worker: Worker): void {
    const timer = setTimeout(() => {
      const at = this.idle.findIndex((w) => w.worker === worker);
      if (at >= 0) this.idle.splice(at, 1);
      void worker.terminate();
    }, IDLE_WORKER_MS);
    timer.unref();
    this.idle.push({ worker, timer });
  }

  private startWorker(): Worker {
    const resourceLimits = { maxOldGenerationSizeMb: this.limits.heapMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };
    const worker = path.extname(__filename) === '.ts'
      // Running from the TypeScript sources (tests): the worker transpiles its modules as the test runner does.
      ? new Worker(`require(${JSON.stringify(TS_REGISTER)}); require(${JSON.stringify(path.join(__dirname, 'package-worker.ts'))});`,
        { eval: true, resourceLimits })
      : new Worker(path.join(__dirname, 'package-worker.js'), { resourceLimits });
    worker.unref();
    return worker;
  }
}

const TS_REGISTER = path.join(__dirname, '..', '..', 'test', 'support', 'ts-register.cjs');
