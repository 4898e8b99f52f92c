/**
 * Early acknowledgement of the user's adb writes at the tunnel's near end. adb without `delayed_ack`
 * (Debian's adb 29; the gateway's endpoint never offers it) keeps one WRTE per stream in flight until its OKAY,
 * and through the hub that OKAY crosses the CLI, hub, link and gateway and back: a push ran at half the speed of
 * a direct one. Here, per stream, the CLI answers OKAY to a WRTE as soon as it has passed the WRTE on, while fewer
 * than `window` such early OKAYs await the device's; it swallows the device's OKAYs (first in, first out) and
 * answers a WRTE beyond the window when the device's next OKAY comes. So the client has at most `window + 1`
 * packets of a stream in the tunnel; the WebSocket's backpressure still stops it reading further.
 * What the device answers still reaches the client: a failed push is reported by the sync protocol (FAIL) or by
 * the stream's CLSE, as without early OKAYs. Packets are never reordered; OKAYs are only added between packets.
 * Not an adb stream (garbage, or a `delayed_ack` peer whose OKAYs carry a window): the relay passes bytes through.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { A_CLSE, A_CNXN, A_OKAY, A_WRTE, AdbPacketScanner, emptyPacket, type AdbHeader } from './adb-packet-scanner';

/**
 * `devicelab connect`'s default window: 4 packets of at most 1 MiB per stream keep a push's pipe full across the
 * hub (the adb-access bench: mean +0.07 of the baseline over 9 paired runs, -0.09 to +0.24).
 */
export const EARLY_ACK_WINDOW = 4;

interface StreamAcks {
  /** The device's local id (the WRTE's arg1). */
  remoteId: number;
  /** WRTEs passed on whose OKAY the device has not sent yet. */
  inFlight: number;
  /** The client waits for an OKAY the device has not sent yet (its WRTE was beyond the window). */
  clientWaits: boolean;
}

/** The two directions of one adb connection through the tunnel: `toDevice` from the client, `toClient` to it. */
export interface EarlyAckRelay {
  toDevice: Transform;
  toClient: Transform;
}

export function earlyAckRelay(window = EARLY_ACK_WINDOW): EarlyAckRelay {
  const streams = new Map<number, StreamAcks>(); // by the client's local id
  const fromClient = new AdbPacketScanner();
  const fromDevice = new AdbPacketScanner();
  let passThrough = false;
  /** Early OKAYs waiting for the client-bound stream to reach a packet boundary. */
  let owed: Buffer[] = [];

  const stop = () => {
    passThrough = true;
    streams.clear();
    owed = [];
  };

  const toClient = new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      // Scanned even when passing through: a header it holds back is passed once whole.
      const out = fromDevice.scan(chunk, deviceKeeps, (_header, pieces) => {
        if (owed.length > 0) pieces.push(...owed);
        owed = [];
      });
      if (fromDevice.broken) stop(); // not adb: what follows passes as it is
      for (const piece of out) this.push(piece);
      done();
    },
  });

  /** A device's packet: its OKAYs for streams with early OKAYs are swallowed (answered early already). */
  function deviceKeeps(header: AdbHeader): boolean {
    if (passThrough) return true;
    if (header.command === A_OKAY) {
      // An OKAY carrying bytes is delayed_ack's window: that client does not wait per packet.
      if (header.length > 0) {
        stop();
        return true;
      }
      const stream = streams.get(header.arg1);
      if (!stream || stream.remoteId !== header.arg0 || stream.inFlight === 0) return true;
      stream.inFlight -= 1;
      if (!stream.clientWaits) return false;
      stream.clientWaits = false;
      return true; // the OKAY the client waits for: the one beyond the window, or the first after a full window
    }
    if (header.command === A_CLSE) streams.delete(header.arg1);
    if (header.command === A_CNXN) streams.clear();
    return true;
  }

  const answerEarly = (okay: Buffer) => {
    if (toClient.writableEnded || toClient.destroyed) return; // the device's side closed: nothing to answer
    if (fromDevice.atBoundary && owed.length === 0) toClient.push(okay);
    else owed.push(okay);
  };

  const toDevice = new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      // The client's bytes pass unchanged and before the early OKAYs they earn.
      this.push(chunk);
      if (passThrough) return done();
      fromClient.scan(chunk, () => true, (header) => {
        if (!passThrough) clientPacket(header);
      });
      if (fromClient.broken) stop();
      done();
    },
  });

  function clientPacket(header: AdbHeader): void {
    if (header.command === A_WRTE) {
      let stream = streams.get(header.arg0);
      if (!stream || stream.remoteId !== header.arg1) {
        stream = { remoteId: header.arg1, inFlight: 0, clientWaits: false };
        streams.set(header.arg0, stream);
      }
      stream.inFlight += 1;
      if (stream.inFlight <= window) answerEarly(emptyPacket(A_OKAY, header.arg1, header.arg0));
      else stream.clientWaits = true;
      return;
    }
    if (header.command === A_CLSE) streams.delete(header.arg0);
    if (header.command === A_CNXN) streams.clear();
  }

  return { toDevice, toClient };
}
