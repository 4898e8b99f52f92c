/**
 * "The device is being used": what keeps a retain from being released as idle. Use is any API call about the device
 * by its holder, traffic through the hub tunnel, a connection opened to its adb or usbmux endpoint (the gateway's
 * access event) and bytes through it (the gateway's DeviceUse, at most every 30 s per device), an Appium command, a
 * live-screen controller. Each replica coalesces what it hears: at most one
 * write per device per `intervalMs` of the API's clock (never one per packet), stamping the lease's `last_used_at`
 * (migration 035) and clearing a warning already given.
 */
import { sql } from 'kysely';
import type { Logger } from '@devicelab/shared';
import type { Db } from '../store/database';

/** How often one replica writes the use of one device at most. */
export const USE_WRITE_INTERVAL_MS = 30_000;

export class DeviceUseNotes {
  /** Device (Guid or identifier + holder) -> when its use was last written, by the API's clock. */
  private readonly written = new Map<string, number>();

  constructor(
    private readonly db: Db, private readonly now: () => Date, private readonly logger?: Logger,
    private readonly intervalMs = USE_WRITE_INTERVAL_MS,
  ) {}

  /**
   * Notes use of the device `deviceId` (Guid) by whoever holds it; with `holderId` (the caller of an API call) only
   * when that caller holds it. `identifier` may be a serial or vendor id where no Guid is at hand.
   */
  note(identifier: string, holderId?: string): void {
    const at = this.now();
    const key = `${identifier}\u0000${holderId ?? ''}`;
    const last = this.written.get(key);
    if (last !== undefined && at.getTime() - last < this.intervalMs && at.getTime() >= last) return;
    this.written.set(key, at.getTime());
    if (this.written.size > 10_000) this.written.delete(this.written.keys().next().value!);
    const guid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(identifier) ? identifier : null;
    void sql`UPDATE device_leases l SET last_used_at = greatest(l.last_used_at, ${at.toISOString()}::timestamptz), warned_at = NULL
      FROM devices d
      WHERE d.id = l.device_id AND d.retain_id = l.retain_id
        -- Written use this recent (by any replica) needs no write, unless a warning is to be withdrawn.
        AND (l.last_used_at < ${at.toISOString()}::timestamptz - make_interval(secs => ${this.intervalMs / 1000})
          OR l.warned_at IS NOT NULL)
        AND (d.id = ${guid}::uuid OR d.vendor_unique_identifier = ${identifier} OR d.serial_number = ${identifier})
        AND (${holderId ?? null}::uuid IS NULL OR d.retained_by = ${holderId ?? null}::uuid)`.execute(this.db)
      .catch((err: unknown) => this.logger?.warn({ err }, 'could not note a device use'));
  }
}

/**
 * Notes use of a device (its Guid, serial or vendor id) by its holder: for the Appium endpoint (each command) and
 * the live screen (each controller input). Cheap to call often: writes are coalesced per device.
 */
export function noteDeviceUse(ctx: { deviceUse: DeviceUseNotes }, deviceId: string): void {
  ctx.deviceUse.note(deviceId);
}
