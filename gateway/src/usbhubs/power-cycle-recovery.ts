/**
 * Recovery: a device that stays Offline or unauthorized (or gone from adb) while its port is on Data and the
 * hub sees it attached is power-cycled (port Off, a pause, Data again), with a growing pause between attempts
 * (`afterMs`, doubling up to `maxBackoffMs`) and an Event (Note) each time. A device back to Ready starts over.
 */
import type { Logger } from '@devicelab/shared';
import { HubPortLoop } from './hub-port-loop';
import type { UsbHubService } from './usb-hub-service';

export interface RecoveryOptions {
  /** How long a device must be unusable before the first power-cycle. */
  afterMs: number;
  maxBackoffMs: number;
  /** How long the port stays Off. */
  offMs: number;
  checkIntervalMs: number;
}

export const DEFAULT_RECOVERY: RecoveryOptions = { afterMs: 120_000, maxBackoffMs: 3_600_000, offMs: 3_000, checkIntervalMs: 10_000 };

interface Trouble {
  since: number;
  attempts: number;
  nextAt: number;
}

export class PowerCycleRecovery extends HubPortLoop {
  private readonly troubles = new Map<string, Trouble>();

  constructor(
    private readonly hubs: UsbHubService,
    private readonly options: RecoveryOptions,
    logger: Logger,
  ) {
    super(options.checkIntervalMs, logger, 'recovery');
  }

  protected async pass(): Promise<void> {
    const now = Date.now();
    for (const { controller, hub, port, status, device } of this.hubs.portsWithDevices()) {
      const readiness = this.hubs.device(device)?.readiness ?? 'Absent';
      const stuck = !hub.isErrored && status.state === 'Data' && status.attached
        && (readiness === 'Offline' || readiness === 'Unauthorized' || readiness === 'Absent');
      if (!stuck) {
        if (readiness === 'Ready') this.troubles.delete(device);
        continue;
      }
      let trouble = this.troubles.get(device);
      if (!trouble) {
        trouble = { since: now, attempts: 0, nextAt: now + this.options.afterMs };
        this.troubles.set(device, trouble);
      }
      if (now < trouble.nextAt) continue;
      trouble.attempts += 1;
      trouble.nextAt = now + Math.min(this.options.afterMs * 2 ** trouble.attempts, this.options.maxBackoffMs);
      const where = `port ${port} of hub ${hub.serialNumber}`;
      try {
        await controller.setPortMode(port, 'Off');
        await new Promise((resolve) => setTimeout(resolve, this.options.offMs));
        await controller.setPortMode(port, 'Data');
        this.hubs.emitEvent(device,
          `Recovery: ${where} power-cycled (attempt ${trouble.attempts}): device ${readiness} while attached`,
          `unusable for ${Math.round((now - trouble.since) / 1000)} s; next attempt in ${Math.round((trouble.nextAt - now) / 1000)} s if still stuck`,
          true, now); // stamped when the attempt began, the moment the growing pauses are counted from
      } catch (err) {
        this.hubs.emitEvent(device, `Recovery: power-cycling ${where} failed (attempt ${trouble.attempts})`,
          err instanceof Error ? err.message : String(err), false, now);
      }
    }
  }
}
