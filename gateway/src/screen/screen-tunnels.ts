/**
 * The gateway end of a screen viewer: an OpenTunnel with service `screen` is one viewer of the device's shared
 * capture (device-screens.ts) over one Tunnel call, one screen message per TunnelFrame. The gateway checks again
 * what the hub decided: a tunnel stands on the retain the hub named (`retain_id`, '' for a device nobody retains);
 * it is refused when that is not the device's current retain here, and ended when the retain changes (release,
 * disable, new retainer), as the adb endpoints are. Only the retainer controls: input from a view-only tunnel, or
 * from a tunnel of anyone but the retainer, is dropped here. A viewer that reads slowly gets the newest frame:
 * while two frames wait for the link to take them, each new frame replaces the one waiting.
 */
import type { OpenTunnel, Retention } from '@devicelab/proto';
import {
  type Logger, type ScreenControl, encodeScreenControl, encodeScreenFrame, parseScreenInput,
} from '@devicelab/shared';
import type { TunnelCall } from '../access/hub-tunnel';
import type { TunnelService } from '../link/channels/channel';
import type { DeviceScreens, ScreenViewer } from './device-screens';

/** Frames written to screen tunnels, and frames replaced by a newer one while a tunnel did not drain (metrics). */
export const screenTunnelCounts = { framesSent: 0, framesDropped: 0 };

interface OpenViewer {
  retainId: string;
  close(reason: string): void;
}

/** Key, text and rotate inputs of one viewer running at once; more are dropped. */
const MAX_COMMANDS_PER_VIEWER = 4;

/** Frames written to the call and not yet taken by the link, beyond which a newer frame replaces the waiting one. */
const FRAMES_IN_FLIGHT = 2;

class TunnelViewer implements ScreenViewer {
  private waitingFrame: Buffer | undefined;
  private inFlight = 0;
  private ended = false;

  constructor(private readonly call: TunnelCall, readonly viewOnly: boolean, private readonly onEnd: () => void) {}

  control(message: ScreenControl): void {
    if (!this.ended) this.call.write({ data: encodeScreenControl(message) });
  }

  frame(image: Buffer): void {
    if (this.ended) return;
    if (this.inFlight >= FRAMES_IN_FLIGHT) {
      if (this.waitingFrame) screenTunnelCounts.framesDropped++;
      this.waitingFrame = image;
      return;
    }
    this.inFlight++;
    screenTunnelCounts.framesSent++;
    // The callback comes once the link took the frame (its flow control lets it go), not when it was queued.
    this.call.write({ data: encodeScreenFrame(image) }, () => {
      this.inFlight--;
      const next = this.waitingFrame;
      this.waitingFrame = undefined;
      if (next) this.frame(next);
    });
  }

  end(reason: string): void {
    if (this.ended) return;
    this.control({ t: 'error', message: reason });
    this.ended = true;
    this.waitingFrame = undefined;
    this.call.end();
    // A hub that does not take the end must not keep the call open.
    setTimeout(() => this.call.cancel(), 500).unref();
    this.onEnd();
  }
}

export function screenTunnels(screens: DeviceScreens, logger: Logger): TunnelService {
  /** The current retain of each device as the hub told it ('' or absent: nobody retains it), and its retainer. */
  const retains = new Map<string, { retainId: string; userLogin: string }>();
  const open = new Map<string, Set<OpenViewer>>();

  const apply = (retention: Retention) => {
    const retainId = retention.retainId ?? '';
    if (retainId) retains.set(retention.vendorUniqueIdentifier, { retainId, userLogin: retention.userLogin ?? '' });
    else retains.delete(retention.vendorUniqueIdentifier);
    for (const viewer of [...open.get(retention.vendorUniqueIdentifier) ?? []]) {
      if (viewer.retainId !== retainId) viewer.close('The device was released or retained by someone else.');
    }
  };

  return {
    retentions(retentions, complete) {
      if (complete) {
        const told = new Set(retentions.map((r) => r.vendorUniqueIdentifier));
        for (const id of [...retains.keys()]) if (!told.has(id)) apply({ vendorUniqueIdentifier: id, retainId: '' });
      }
      for (const retention of retentions) apply(retention);
    },
    open(request, openCall) {
      const vuid = request.vendorUniqueIdentifier;
      const call = openCall();
      call.on('error', () => undefined);
      const current = retains.get(vuid);
      const retainId = request.retainId ?? '';
      if ((current?.retainId ?? '') !== retainId) {
        call.write({ tunnelId: request.tunnelId, error: 'The gateway refuses the screen: the device\'s retain changed.' });
        call.end();
        return;
      }
      // Control is the retainer's alone, whatever the hub asked.
      const viewOnly = request.viewOnly === true || !current || current.userLogin !== request.userLogin;
      call.write({ tunnelId: request.tunnelId });
      let detach = (): void => undefined;
      const entry: OpenViewer = { retainId, close: (reason) => viewer.end(reason) };
      const forget = () => {
        detach();
        open.get(vuid)?.delete(entry);
        if (open.get(vuid)?.size === 0) open.delete(vuid);
      };
      const viewer = new TunnelViewer(call, viewOnly, forget);
      const set = open.get(vuid) ?? new Set();
      set.add(entry);
      open.set(vuid, set);
      let commandsRunning = 0;
      call.on('data', (frame: { data?: Buffer }) => {
        if (!frame.data) return;
        const input = parseScreenInput(frame.data);
        if (!input) return;
        if (input.t === 'ping') return viewer.control({ t: 'pong', ...(input.id !== undefined ? { id: input.id } : {}) });
        // Keys, text and rotation are device commands that take a while each: a viewer gets a few at once, the
        // rest are dropped (touch goes down minitouch's socket and waits for nothing).
        const command = input.t !== 'touch';
        if (command && commandsRunning >= MAX_COMMANDS_PER_VIEWER) return;
        if (command) commandsRunning++;
        screens.input(vuid, viewer, input).catch((err: unknown) => {
          logger.debug({ err, device: vuid }, 'screen input failed');
          viewer.control({ t: 'error', message: `The device did not take the input: ${err instanceof Error ? err.message : String(err)}` });
        }).finally(() => { if (command) commandsRunning--; });
      });
      const closed = () => viewer.end('The viewer left.');
      call.once('end', closed);
      call.once('close', closed);
      call.once('error', closed);
      detach = screens.attach(vuid, viewer);
    },
  };
}

/**
 * `screen-still`: one still image of the device (a grid's thumbnail, a screenshot download) as one frame message,
 * then the end; bound to the retain the hub named, as the screen is.
 */
export function screenStillTunnels(screens: DeviceScreens, logger: Logger): TunnelService {
  const retains = new Map<string, string>();
  return {
    retentions(retentions, complete) {
      if (complete) retains.clear();
      for (const r of retentions) {
        if (r.retainId) retains.set(r.vendorUniqueIdentifier, r.retainId);
        else retains.delete(r.vendorUniqueIdentifier);
      }
    },
    open(request, openCall) {
      const call = openCall();
      call.on('error', () => undefined);
      if ((retains.get(request.vendorUniqueIdentifier) ?? '') !== (request.retainId ?? '')) {
        call.write({ tunnelId: request.tunnelId, error: 'The gateway refuses the still: the device\'s retain changed.' });
        call.end();
        return;
      }
      call.write({ tunnelId: request.tunnelId });
      screens.still(request.vendorUniqueIdentifier, 8_000).then(
        (image) => call.write({ data: encodeScreenFrame(image) }),
        (err: unknown) => {
          logger.debug({ err, device: request.vendorUniqueIdentifier }, 'no screen still');
          call.write({ data: encodeScreenControl({ t: 'error', message: err instanceof Error ? err.message : String(err) }) });
        },
      ).finally(() => call.end());
    },
  };
}
