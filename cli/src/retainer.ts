/**
 * Retaining devices for a job: by name, or N devices matching a filter, waiting up to --wait for them to become
 * free. The hub's retain is the arbiter: it fails when someone else holds the device, so a device another client
 * took between our list and our retain is simply skipped for the next one. All or nothing: a job that cannot get
 * its N devices in time releases the ones it got. `releaseAll` is what every exit path of a command calls.
 */
import type { ApiClient } from './api-client';
import { hubQuery, isFree, matches, type DeviceFilter } from './device-filter';
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
  filter?: DeviceFilter;
  count: number;
  /** How long to wait for enough matching devices to be free (0: not at all). */
  waitMs: number;
}

const POLL_INTERVAL_MS = 2000;

interface Candidates {
  /** Those a retain may get now. */
  free: Device[];
  matching: Device[];
  /** How many devices match at all, whatever their state: more than this can never be retained. */
  possible: number;
}

export class Retainer {
  readonly retained: Retained[] = [];

  constructor(private readonly api: ApiClient, private readonly out: Output, private readonly signal?: AbortSignal) {}

  async retain(request: RetainRequest): Promise<Retained[]> {
    const started = Date.now();
    const deadline = started + request.waitMs;
    const wanted = request.devices?.length ?? request.count;
    const describe = request.devices ? request.devices.join(', ') : `--filter ${request.filter?.text || '(any)'}`;
    const named = request.devices ? await Promise.all(request.devices.map((id) => this.resolve(id))) : undefined;
    for (let round = 0; ; round++) {
      this.checkInterrupted();
      const candidates = named ? await this.refresh(named) : await this.matching(request.filter ?? { text: '' });
      if (candidates.possible < wanted) {
        // Fewer devices match at all (busy or offline included) than asked for: waiting cannot help.
        this.out.clearProgress();
        throw new CliError(this.tooFewMessage(describe, wanted, candidates.possible), EXIT.noDevice);
      }
      for (const device of candidates.free) {
        if (this.retained.length >= wanted) break;
        if (this.retained.some((r) => r.device.id === device.id)) continue;
        await this.tryRetain(device);
      }
      if (this.retained.length >= wanted) {
        if (round > 0) this.out.clearProgress();
        return this.retained;
      }
      const now = Date.now();
      if (now >= deadline) {
        this.out.clearProgress();
        throw new CliError(this.noDeviceMessage(describe, wanted, candidates.matching, request.waitMs), EXIT.noDevice);
      }
      this.out.progress(`waiting for ${wanted} device(s) (${describe}): ${this.retained.length} retained, `
        + `${candidates.matching.length} matching, none more free; ${formatElapsed(now - started)} of ${formatElapsed(request.waitMs)}`,
      round === 0);
      await this.sleep(Math.min(POLL_INTERVAL_MS, deadline - now));
    }
  }

  /** Releases every device this process retained, in parallel; failures are reported, never thrown. */
  async releaseAll(): Promise<void> {
    const held = this.retained.splice(0);
    await Promise.all(held.map(async ({ device }) => {
      try {
        await this.api.result('POST', '/Device', { params: { action: 'release', id: device.id }, timeoutMs: 30_000 });
      } catch (err) {
        this.out.error(`Could not release ${label(device)}: ${(err as Error).message} Release it with \`devicelab release ${device.id}\`.`);
      }
    }));
  }

  private async tryRetain(device: Device): Promise<void> {
    try {
      const ticket = await this.api.result<DeviceAccessTicket>('POST', '/Device', { params: { action: 'retain', id: device.id } });
      this.retained.push({ device, ticket });
    } catch (err) {
      // Someone else got it first (or it just went offline): the next candidate, or the next round.
      if (!(err instanceof CliError) || err.exitCode !== EXIT.apiFailure) throw err;
    }
  }

  private async resolve(identifier: string): Promise<Device> {
    const [device] = await this.api.get<Device[]>('/Device', { params: { AnyId: identifier } });
    if (!device) {
      throw new CliError(`No device '${identifier}' (Guid, serial number or vendor id). \`devicelab devices\` lists them.`, EXIT.apiFailure);
    }
    return device;
  }

  private async refresh(devices: Device[]): Promise<Candidates> {
    const current = await Promise.all(devices.map((d) => this.resolve(d.id)));
    // A named device this login already holds is retained again (the hub answers the same retain).
    const mine = (d: Device) => d.retainedByUserName?.toLowerCase() === this.api.credentials.user.toLowerCase();
    return { free: current.filter((d) => isFree(d) || (mine(d) && d.availability === 'Online')), matching: current, possible: current.length };
  }

  private async matching(filter: DeviceFilter): Promise<Candidates> {
    const all = await this.api.get<Device[]>('/Device', { params: hubQuery(filter) });
    const possible = all.filter((device) => matches(device, { ...filter, free: undefined, online: undefined })).length;
    const matching = all.filter((device) => matches(device, { ...filter, free: undefined }));
    // Fullest battery first, then by name: a stable, sensible order for people reading the log.
    const free = matching.filter(isFree).sort((a, b) => (b.batteryPercentCharged ?? 0) - (a.batteryPercentCharged ?? 0)
      || (a.name ?? '').localeCompare(b.name ?? ''));
    return { free: filter.free === false ? [] : free, matching, possible };
  }

  private tooFewMessage(describe: string, wanted: number, possible: number): string {
    if (possible === 0) return `No device matches ${describe}. \`devicelab devices\` shows what the lab has; widen the filter.`;
    return `Only ${possible} device(s) match ${describe}, busy or offline ones included: --count ${wanted} cannot be met, however `
      + `long it waits. Ask for fewer (--count ${possible}) or widen the filter.`;
  }

  private noDeviceMessage(describe: string, wanted: number, matching: Device[], waitMs: number): string {
    const got = this.retained.length ? ` (${this.retained.length} retained, now released)` : '';
    const busy = matching.filter((d) => !isFree(d) && !this.retained.some((r) => r.device.id === d.id)).map((d) => `${label(d)}: ${whyNotFree(d)}`).join('; ');
    return `Fewer than ${wanted} device(s) matching ${describe} were free within ${formatElapsed(waitMs)}${got}`
      + `${busy ? ` [${busy}]` : ''}. Wait longer (--wait 30m), ask for fewer (--count), or widen the filter.`;
  }

  private checkInterrupted(): void {
    if (this.signal?.aborted) throw interrupted(this.signal);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const signal = this.signal;
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done);
    });
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

function whyNotFree(device: Device): string {
  if (device.retainedById) return `retained by ${device.retainedByUserName ?? device.retainedByDisplayName ?? 'someone'}`;
  if (device.enabled === false) return 'disabled';
  if (device.availability !== 'Online') return 'offline';
  return 'busy';
}
