/** Blobs: app binaries streamed from the hub (FetchBlob) into the app cache, for installs. */
import type { BlobChunk } from '@devicelab/proto';
import type { HubConnection } from './channel';

/** A hub that sends nothing for this long while a download waits has stalled (a stuck database, a frozen replica). */
const DEFAULT_BLOB_IDLE_TIMEOUT_MS = 30_000;

export class BlobsChannel {
  constructor(private readonly link: HubConnection, private readonly idleTimeoutMs = DEFAULT_BLOB_IDLE_TIMEOUT_MS) {}

  /**
   * The blob as a stream of chunks from the hub's FetchBlob (at most the receive window in flight); `announce`
   * hears its whole size from the first chunk. Any replica serves any blob (they are in the shared database); the
   * current session's is the one known to answer.
   */
  async *fetch(sha256: string, announce?: (totalSize: number) => void): AsyncIterable<Buffer> {
    const stream = this.link.client().FetchBlob({ sha256 }, this.link.metadata());
    // The clock runs only while this waits for the hub, not while the consumer writes what it got (backpressure).
    const idleMs = this.idleTimeoutMs;
    let stalled = false;
    let timer: NodeJS.Timeout | undefined;
    const waitForHub = () => {
      timer = setTimeout(() => { stalled = true; stream.cancel(); }, idleMs);
    };
    try {
      let first = true;
      waitForHub();
      for await (const chunk of stream as AsyncIterable<BlobChunk>) {
        clearTimeout(timer);
        if (first) announce?.(Number(chunk.totalSize));
        first = false;
        if (chunk.data && chunk.data.length > 0) yield Buffer.from(chunk.data);
        waitForHub();
      }
    } catch (err) {
      if (stalled) throw new Error(`the hub sent nothing for ${Math.round(idleMs / 1000)} s`);
      throw err;
    } finally {
      clearTimeout(timer);
      stream.cancel();
    }
  }
}
