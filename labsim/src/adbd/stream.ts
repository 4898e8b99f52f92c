/**
 * One multiplexed ADB stream as seen by a service.
 *
 * Device -> host writes go through a queue because the protocol allows only
 * one unacknowledged WRTE per stream: the next chunk leaves when the host's
 * OKAY arrives. Chunks are cut to the host's maxdata.
 */
import { EventEmitter } from 'node:events';

export interface StreamSink {
  sendWrite(localId: number, remoteId: number, data: Buffer): void;
  sendClose(localId: number, remoteId: number): void;
}

export class AdbStream extends EventEmitter {
  private queue: Buffer[] = [];
  private queued = 0;
  private inFlight = false;
  private endRequested = false;
  private closedFlag = false;

  constructor(
    readonly localId: number,
    readonly remoteId: number,
    readonly service: string,
    private readonly sink: StreamSink,
    private readonly maxData: number,
  ) {
    super();
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  /** Bytes written but not yet sent to the host; a producer pauses above its limit and resumes on 'drain'. */
  get queuedBytes(): number {
    return this.queued;
  }

  /** Queues bytes for the host. */
  write(data: Buffer | string): void {
    if (this.closedFlag || this.endRequested) return;
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    for (let off = 0; off < buf.length; off += this.maxData) {
      this.queue.push(buf.subarray(off, off + this.maxData));
    }
    this.queued += buf.length;
    this.pump();
  }

  /** Closes the stream once every queued byte has been acknowledged. */
  end(data?: Buffer | string): void {
    if (data !== undefined) this.write(data);
    this.endRequested = true;
    this.pump();
  }

  /** Closes at once, dropping queued data (used for refusals and errors). */
  destroy(): void {
    if (this.closedFlag) return;
    this.queue = [];
    this.queued = 0;
    this.finish(true);
  }

  /** Host acknowledged our last WRTE. */
  onAck(): void {
    this.inFlight = false;
    this.pump();
  }

  /** Host sent WRTE payload. */
  onHostData(data: Buffer): void {
    if (!this.closedFlag) this.emit('data', data);
  }

  /** Host closed the stream (CLSE) or the transport died. */
  onHostClose(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.queue = [];
    this.queued = 0;
    this.emit('close');
  }

  private pump(): void {
    if (this.closedFlag || this.inFlight) return;
    const next = this.queue.shift();
    if (next) {
      this.inFlight = true;
      this.queued -= next.length;
      this.sink.sendWrite(this.localId, this.remoteId, next);
      if (this.queue.length === 0) this.emit('drain');
    } else if (this.endRequested) {
      this.finish(true);
    }
  }

  private finish(sendClose: boolean): void {
    this.closedFlag = true;
    if (sendClose) this.sink.sendClose(this.localId, this.remoteId);
    this.emit('close');
  }
}
