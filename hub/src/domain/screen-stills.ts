/**
 * Still images of device screens for the dashboard's grid and the screenshot download: one frame of the device's
 * shared capture on its gateway (a view-only screen tunnel that ends after the first frame), kept for a few
 * seconds per device so a grid of many devices asks each gateway at a low rate, and with a bound on how many are
 * taken at once, so the grid never competes with the API for the hub. Who may see one: whoever may watch the
 * screen (screen-access.ts), and anyone who may list devices for a device nobody retains.
 */
import { ApiFailure, isScreenFrame } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { requireEntitlement } from '../auth/entitlements';
import { abortTunnel, type GatewayDirectory } from '../gateways/gateway-directory';
import type { Db } from '../store/database';
import { resolveDevice } from './device-queries';
import { authorizeScreen } from './screen-access';

export interface ScreenStill {
  image: Buffer;
  contentType: 'image/jpeg' | 'image/png';
  takenAt: Date;
}

export interface ScreenStillsOptions {
  /** How long a still is served before a new one is taken; default 5 s. */
  maxAgeMs?: number;
  /** Stills being taken at once; more wait for a free turn (failing after `timeoutMs`). */
  concurrent?: number;
  timeoutMs?: number;
}

export class ScreenStills {
  private readonly kept = new Map<string, ScreenStill>();
  private readonly taking = new Map<string, Promise<ScreenStill>>();
  private running = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly db: Db, private readonly gateways: GatewayDirectory, private readonly options: ScreenStillsOptions = {}) {}

  async still(user: AuthenticatedUser, identifier: string): Promise<ScreenStill> {
    requireEntitlement(user, 'DeviceList');
    const device = await resolveDevice(this.db, identifier);
    if (device.deleted || !device.enabled) throw new ApiFailure(`Device '${device.name}' is ${device.deleted ? 'deleted' : 'disabled'}.`, 'DEVICE_UNAVAILABLE');
    if (device.retain_id) await authorizeScreen(this.db, user, device.id, { viewOnly: true });
    // Kept per retain: a still taken for one retainer is not shown after the device changed hands.
    const key = `${device.id} ${device.retain_id ?? ''}`;
    const kept = this.kept.get(key);
    if (kept && Date.now() - kept.takenAt.getTime() < (this.options.maxAgeMs ?? 5_000)) return kept;
    let taking = this.taking.get(key);
    if (!taking) {
      taking = this.take(device.vendor_unique_identifier, device.retain_id ?? '').finally(() => this.taking.delete(key));
      this.taking.set(key, taking);
    }
    const still = await taking;
    this.kept.set(key, still);
    if (this.kept.size > 5_000) this.kept.delete(this.kept.keys().next().value as string);
    return still;
  }

  private async take(vendorUniqueIdentifier: string, retainId: string): Promise<ScreenStill> {
    const timeoutMs = this.options.timeoutMs ?? 8_000;
    const deadline = Date.now() + timeoutMs;
    await this.turn(timeoutMs);
    try {
      const tunnel = await this.gateways.openTunnel({
        vendorUniqueIdentifier, remoteAddress: 'the hub (screen still)', userLogin: '', service: 'screen-still', viewOnly: true, retainId,
      }, Math.max(1, deadline - Date.now())).catch((err: unknown) => {
        // No connected gateway holds it here (or on another replica, whose stills it takes itself).
        throw new ApiFailure(`The device's screen is not reachable: ${err instanceof Error ? err.message : String(err)}`, 'GATEWAY_OFFLINE');
      });
      return await new Promise<ScreenStill>((resolve, reject) => {
        const timer = setTimeout(() => finish(new ApiFailure('The device gave no screen image in time.', 'DEVICE_TIMEOUT')), Math.max(1, deadline - Date.now()));
        const finish = (result: ScreenStill | Error) => {
          clearTimeout(timer);
          tunnel.end();
          setTimeout(() => abortTunnel(tunnel), 250).unref();
          if (result instanceof Error) reject(result);
          else resolve(result);
        };
        tunnel.on('data', (frame) => {
          if (!frame.data || !isScreenFrame(frame.data)) return;
          const image = Buffer.from(frame.data.subarray(1));
          finish({ image, contentType: image[0] === 0x89 ? 'image/png' : 'image/jpeg', takenAt: new Date() });
        });
        tunnel.on('error', () => finish(new ApiFailure('The screen of the device could not be read.', 'DEVICE_UNREACHABLE')));
        tunnel.on('end', () => finish(new ApiFailure('The screen of the device could not be read.', 'DEVICE_UNREACHABLE')));
        tunnel.resume();
      });
    } finally {
      this.release();
    }
  }

  private turn(timeoutMs: number): Promise<void> {
    if (this.running < (this.options.concurrent ?? 8)) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const start = () => {
        clearTimeout(timer);
        this.running++;
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.queue.indexOf(start);
        if (at >= 0) this.queue.splice(at, 1);
        reject(new ApiFailure('The hub is taking many screen images; try again shortly.', 'DEVICE_TIMEOUT'));
      }, timeoutMs);
      this.queue.push(start);
    });
  }

  private release(): void {
    this.running--;
    this.queue.shift()?.();
  }
}
