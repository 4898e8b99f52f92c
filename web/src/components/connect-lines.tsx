/**
 * After a retain, the lines that open the device: `adb connect` straight to its gateway's adb endpoint (the retain
 * ticket's address and port), or `devicelab connect` through the hub when the gateway is not reachable. The ticket
 * is kept for the browser tab, so the lines survive a reload while the retain lasts.
 */
import type { Device, DeviceAccessTicket } from '../api/types';
import { CopyLine } from './copy-line';

const storageKey = (deviceId: string) => `devicelab-ticket:${deviceId}`;

export function keepTicket(deviceId: string, ticket: DeviceAccessTicket | undefined): void {
  if (ticket) sessionStorage.setItem(storageKey(deviceId), JSON.stringify(ticket));
  else sessionStorage.removeItem(storageKey(deviceId));
}

function keptTicket(deviceId: string): DeviceAccessTicket | undefined {
  try {
    return JSON.parse(sessionStorage.getItem(storageKey(deviceId)) ?? 'null') ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * A local port for the tunnel: the endpoint's port moved up by 10000, so it differs per device of a gateway and does
 * not collide with the gateway's own endpoint when both run on one machine (as in the demo).
 */
const localPort = (ticket: DeviceAccessTicket | undefined): number => (ticket && ticket.gatewayPort > 0 ? ticket.gatewayPort + 10_000 : 15037);

export function ConnectLines({ device }: { device: Device }) {
  const ticket = keptTicket(device.id);
  const ios = device.operatingSystem === 'iOS';
  return (
    <section class="card connect" aria-labelledby="connect-title">
      <h2 id="connect-title">Connect</h2>
      {!ios && ticket && ticket.gatewayPort > 0 && <>
        <p class="muted">From a machine that reaches the gateway (your adb key must be registered):</p>
        <CopyLine text={`adb connect ${ticket.gatewayAddress}:${ticket.gatewayPort}`} label="adb connect line" />
      </>}
      <p class="muted">From anywhere, through the hub, with the <code>devicelab</code> CLI:</p>
      <CopyLine text={ios ? `devicelab connect ${device.id}` : `devicelab connect ${device.id} --port ${localPort(ticket)} --adb`}
        label="devicelab connect line" />
    </section>
  );
}
