/** The lease of a retained device as its facts: when it ends and when it goes idle, counting down each 15 s. */
import type { Device } from '../api/types';
import { useNow } from '../live/use-now';

function countdown(wire: string | undefined, now: number): string | undefined {
  if (!wire) return undefined;
  const at = Date.parse(wire);
  const minutes = Math.round((at - now) / 60_000);
  const when = new Date(at).toLocaleTimeString();
  return minutes <= 0 ? `${when} (now)` : `${when} (in ${minutes >= 120 ? `${Math.round(minutes / 60)} h` : `${minutes} min`})`;
}

export function LeaseFacts({ device }: { device: Device }) {
  const now = useNow(15_000);
  if (!device.retainedById) return null;
  const ends = countdown(device.leaseEndTime, now);
  const idle = countdown(device.idleReleaseTime, now);
  return (
    <>
      {device.leaseName && <><dt>Lease</dt><dd>{device.leaseName}</dd></>}
      <dt>Lease ends</dt><dd data-testid="lease-end">{ends ?? 'no maximum'}</dd>
      <dt>Idle release</dt><dd data-testid="idle-release">{idle ?? 'never'}</dd>
    </>
  );
}
