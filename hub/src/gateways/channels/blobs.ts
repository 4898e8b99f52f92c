/** Blobs: app binaries served to gateways (FetchBlob) from the blob store, for installs. */
import * as grpc from '@grpc/grpc-js';
import type { BlobChunk, BlobRequest } from '@devicelab/proto';
import { BlobGoneError } from '../../apps/blob-store';
import type { ChannelContext, HubChannel } from '../link/channel';

/**
 * FetchBlob message size: well under gRPC's 4 MiB receive limit; 4x fewer messages than 64 KiB (per-message cost
 * bounded serving under load), while a call's write queue (16 messages before write() asks to wait) stays 4 MiB.
 */
export const BLOB_CHUNK_BYTES = 256 * 1024;

type FetchBlobCall = grpc.ServerWritableStream<BlobRequest, BlobChunk>;

export function blobsChannel(ctx: ChannelContext): HubChannel {
  return { methods: { FetchBlob: (call: FetchBlobCall) => void serveBlob(ctx, call) } };
}

/** Streams a blob in BLOB_CHUNK_BYTES chunks; total_size rides on the first (an empty blob is one empty chunk). */
async function serveBlob({ blobs, authenticate, logger }: ChannelContext, call: FetchBlobCall): Promise<void> {
  try {
    if (!(await authenticate(call.metadata))) {
      call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'unknown gateway or wrong token' });
      return;
    }
    const sha256 = (call.request.sha256 ?? '').toLowerCase();
    const blob = await blobs.stat(sha256);
    if (!blob) {
      call.emit('error', { code: grpc.status.NOT_FOUND, details: `no blob ${sha256}` });
      return;
    }
    const totalSize = blob.size;
    let first = true;
    for await (const data of rechunk(blobs.read(blob), BLOB_CHUNK_BYTES)) {
      if (call.cancelled) return;
      const chunk: BlobChunk = { data, totalSize: first ? totalSize : 0 };
      first = false;
      if (!call.write(chunk)) await drainedOrCancelled(call);
    }
    if (call.cancelled) return;
    if (first) call.write({ data: Buffer.alloc(0), totalSize });
    call.end();
  } catch (err) {
    if (err instanceof BlobGoneError) {
      if (!call.cancelled) call.emit('error', { code: grpc.status.NOT_FOUND, details: err.message });
      return;
    }
    logger.error({ err }, 'FetchBlob failed');
    if (!call.cancelled) call.emit('error', { code: grpc.status.INTERNAL, details: 'could not read the blob' });
  }
}

/** Waits until the call can take more, or until the gateway went away (then no 'drain' would ever come). */
function drainedOrCancelled(call: FetchBlobCall): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('cancelled', done);
      resolve();
    };
    call.once('drain', done);
    call.once('cancelled', done);
  });
}

/** Re-cuts a byte stream into pieces of exactly `size` bytes (the last may be shorter), copying only across seams. */
async function* rechunk(source: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  let carry: Buffer = Buffer.alloc(0);
  for await (const piece of source) {
    let offset = 0;
    if (carry.length > 0) {
      const take = Math.min(size - carry.length, piece.length);
      carry = Buffer.concat([carry, piece.subarray(0, take)]);
      offset = take;
      if (carry.length < size) continue;
      yield carry;
      carry = Buffer.alloc(0);
    }
    for (; offset + size <= piece.length; offset += size) yield piece.subarray(offset, offset + size);
    if (offset < piece.length) carry = Buffer.from(piece.subarray(offset));
  }
  if (carry.length > 0) yield carry;
}
