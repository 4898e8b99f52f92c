/**
 * Retaining devices for a job: by name, or N devices matching a filter, waiting up to --wait for them to become
 * free. The waiting is the hub's: each device wanted is one request in the lab's first-come waiting line
 * (`POST /Device?action=retain&filter=..&wait=..`), answered the moment a device is handed to it; no polling here.
 * Every retain carries this invocation's lease name. All or nothing: a job that cannot get its N devices in time
 * releases the ones it got. `releaseAll` is what every exit path of a command calls.
 */
import type { ApiClient } from './api-client';
import { leaseName } from './config';
import { withoutState } from './device-filter';
import { CliError, EXIT } from './errors';
import type { Device, DeviceAccessTicket } from './models';
import { formatElapsed, type Output } from './output';
import { signalExitCode, type StopSignal } from './stop-signals';

export interface Retained {
  device: Device;
  ticket: DeviceAccessTicket;
}

export interface RetainRequest {
  /** Device identifiers (Guid, serial or vendor id); when given, the filter and count are not used. */
  devices?: string[];
  /** The filter text as typed (the hub reads it). */
  filter?: string;
  count: number;
  /** How long to wait for enough matching devices to be free (0: not at all). */
  waitMs: number;
}

/** The hub's longest wait in line per request; a longer --wait asks again. */
const HUB_MAX_WAIT_S = 900;

export class Retainer {
  readonly retained: Retained[] = [];
  /** This invocation's lease: a device this login holds under another (another job's) is refused. */
  readonly lease = leaseName();
  /** Settles once every place in line of the current retain has its answer (or gave up). */
  private settling: Promise<unknown> = Promise.resolve();
  /** A place in line was left before its answer came (stopped, or all-or-nothing gave up). */
  private abandoned = false;

  constructor(private readonly api: ApiClient, private readonly out: Output, private readonly signal?: AbortSignal) {}

  async retain(request: RetainRequest): Promise<Retained[]> {
    const started = Date.now();
    const wanted = request.devices?.length ?? request.count;
    const describe = request.devices ? request.devices.join(', ') : `--filter ${request.filter || '(any)'}`;
    const named = request.devices ? await Promise.all(request.devices.map((id) => this.resolve(id))) : undefined;
    if (!named) {
      const possible = (await this.api.get<Device[]>('/Device', { params: { filter: withoutState(request.filter ?? '') } }))
        .filter((device) => !device.deleted).length;
      // Fewer devices match at all (busy or offline included) than asked for: waiting cannot help.
      if (possible < wanted) throw new CliError(this.tooFewMessage(describe, wanted, possible), EXIT.noDevice);
    }
    this.checkInterrupted();
    if (request.waitMs > 0) {
      this.out.progress(`waiting for ${wanted} device(s) (${describe}): 0 retained, in the hub's waiting line for up to `
        + `${formatElapsed(request.waitMs)}`, true);
    }
    const stop = new AbortController();
    const onInterrupt = () => stop.abort(this.signal?.reason);
    this.signal?.addEventListener('abort', onInterrupt);
    try {
      // One place in the hub's line per device wanted; the first failure ends the others (all or nothing).
      const places = Array.from({ length: wanted }, async (_, i) => {
        try {
          const target = named ? { id: named[i].id } : { filter: request.filter ?? '' };
          const ticket = await this.waitInLine(target, started + request.waitMs, stop.signal);
          const device = named?.[i] ?? await this.resolve(ticket.serialNumber || ticket.deviceVendorUniqueIdentifier);
          this.retained.push({ device, ticket });
          if (request.waitMs > 0 && this.retained.length < wanted) {
            this.out.progress(`waiting for ${wanted} device(s) (${describe}): ${this.retained.length} retained`, false);
          }
        } catch (err) {
          this.abandoned = true;
          stop.abort(err);
          throw err;
        }
      });
      // A stop releases what was handed over, including a device whose answer is still being read.
      this.settling = Promise.allSettled(places);
      await Promise.all(places).catch((err: unknown) => {
        this.checkInterrupted();
        if (err instanceof CliError && err.failureCode === 'DEVICE_WAIT_TIMEOUT') {
          throw new CliError(this.noDeviceMessage(describe, wanted, err.message, request.waitMs), EXIT.noDevice);
        }
        throw err;
      });
      return this.retained;
    } finally {
      this.signal?.removeEventListener('abort', onInterrupt);
      this.out.clearProgress();
    }
  }

  /** Releases every device this process retained, in parallel; failures are reported, never thrown. */
  async releaseAll(): Promise<void> {
    await this.settling;
    const held = this.retained.splice(0);
    if (this.abandoned) {
      // A wait given up mid-answer may have been handed a device whose answer never arrived: this invocation's
      // lease name finds it in the hub's record.
      const known = new Set(held.map(({ device }) => device.id));
      const devices = await this.api.get<Device[]>('/Device').catch(() => [] as Device[]);
      for (const device of devices) {
        if (device.leaseName === this.lease && !known.has(device.id)
          && device.retainedByUserName?.toLowerCase() === this.api.credentials.user.toLowerCase()) {
          held.push({ device, ticket: undefined as never });
        }
      }
    }
    await Promise.all(held.map(async ({ device }) => {
      try {
        await this.api.result('POST', '/Device', { params: { action: 'release', id: device.id }, timeoutMs: 30_000 });
      } catch (err) {
        this.out.error(`Could not release ${label(device)}: ${(err as Error).message} Release it with \`devicelab release ${device.id}\`.`);
      }
    }));
  }

  /** Waits in the hub's line until `deadline` (asking again when the hub's own maximum is shorter). */
  private async waitInLine(target: { id: string } | { filter: string }, deadline: number, signal: AbortSignal): Promise<DeviceAccessTicket> {
    for (;;) {
      const seconds = Math.min(HUB_MAX_WAIT_S, Math.max(0, Math.ceil((deadline - Date.now()) / 1000)));
      try {
        return await this.api.result<DeviceAccessTicket>('POST', '/Device', {
          params: { action: 'retain', ...target, wait: String(seconds), lease: this.lease },
          timeoutMs: seconds * 1000 + 60_000, signal,
          hint: (code) => (code === 'LEASE_CONFLICT' ? 'Another job of this login holds it; set DEVICELAB_LEASE to the same '
            + 'value in both to share it knowingly.' : undefined),
        });
      } catch (err) {
        if (!(err instanceof CliError) || err.failureCode !== 'DEVICE_WAIT_TIMEOUT' || Date.now() >= deadline - 1000) throw err;
      }
    }
  }

  /** The device, when this login holds it already (whatever lease it was retained under). */
  async heldByThisLogin(identifier: string): Promise<Device | undefined> {
    const device = await this.resolve(identifier);
    return device.retainedByUserName?.toLowerCase() === this.api.credentials.user.toLowerCase() ? device : undefined;
  }

  private async resolve(identifier: string): Promise<Device> {
    const [device] = await this.api.get<Device[]>('/Device', { params: { AnyId: identifier } });
    if (!device) {
      throw new CliError(`No device '${identifier}' (Guid, serial number or vendor id). \`devicelab devices\` lists them.`, EXIT.apiFailure);
    }
    return device;
  }

  private tooFewMessage(describe: string, wanted: number, possible: number): string {
    if (possible === 0) return `No device matches ${describe}. \`devicelab devices\` shows what the lab has; widen the filter.`;
    return `Only ${possible} device(s) match ${describe}, busy or offline ones included: --count ${wanted} cannot be met, however `
      + `long it waits. Ask for fewer (--count ${possible}) or widen the filter.`;
  }

  private noDeviceMessage(describe: string, wanted: number, hubSays: string, waitMs: number): string {
    const got = this.retained.length ? ` (${this.retained.length} retained, now released)` : '';
    return `Fewer than ${wanted} device(s) matching ${describe} were free within ${formatElapsed(waitMs)}${got} [${hubSays.replace(/\s*\(the hub's answer.*$/, '')}]. `
      + 'Wait longer (--wait 30m), ask for fewer (--count), or widen the filter.';
  }

  private checkInterrupted(): void {
    if (this.signal?.aborted) throw interrupted(this.signal);
  }
}

/** The error of a command stopped by SIGINT (exit 130), SIGTERM (143) or SIGHUP (129), as shells report them. */
export function interrupted(signal: AbortSignal): CliError {
  const name: StopSignal = signal.reason === 'SIGTERM' || signal.reason === 'SIGHUP' ? signal.reason : 'SIGINT';
  return new CliError(`Stopped by ${name}; the devices this command retained are released.`, signalExitCode(name));
}

export function label(device: Device): string {
  return device.name ? `${device.name} (${device.serialNumber ?? device.id})` : device.serialNumber ?? device.id;
}
