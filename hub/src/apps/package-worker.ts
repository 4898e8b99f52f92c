/**
 * The package worker (a worker thread, see package-inspector.ts): reads one uploaded package per message and
 * answers its metadata or the failure text. Whatever a hostile file does to the parsers here (an exception, an
 * endless loop, running out of its heap) ends in this thread only.
 */
import { parentPort } from 'node:worker_threads';
import { ApiFailure, type DeviceOperatingSystem } from '@devicelab/shared';
import { readAppMetadata, type AppMetadata } from './app-metadata';
import type { ZipLimits } from './zip-integrity';

export interface InspectRequest { file: string; operatingSystem: DeviceOperatingSystem; limits: ZipLimits; now: Date }
export type InspectReply = { ok: true; metadata: AppMetadata } | { ok: false; message: string };

parentPort?.on('message', (request: InspectRequest) => {
  readAppMetadata(request.file, request.operatingSystem, request.limits, request.now).then(
    (metadata) => parentPort?.postMessage({ ok: true, metadata } satisfies InspectReply),
    (err: unknown) => {
      const kind = request.operatingSystem === 'Android' ? 'APK' : 'IPA';
      const message = err instanceof ApiFailure ? err.message
        : `The upload is not a valid ${kind}: it cannot be read (${(err as Error)?.message ?? String(err)}).`;
      parentPort?.postMessage({ ok: false, message } satisfies InspectReply);
    },
  );
});
