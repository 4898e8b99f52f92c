/**
 * The session table routes a device or a USB hub to the session of the gateway reporting it now: tested with
 * plain sessions (no link, no adb server, no database).
 */
import type { UsbHubReport } from '@devicelab/proto';
import { HeldDevices, SessionTable, type TabledSession } from '../../src/gateways/link/session-table';

interface TestSession extends TabledSession {
  usbHubs: UsbHubReport[];
}

function sessionOf(table: SessionTable<TestSession>, gatewayName: string): TestSession {
  const session = { gatewayName, gatewayId: `id-${gatewayName}`, usbHubs: [] } as unknown as TestSession;
  Object.assign(session, { devices: new HeldDevices(table, session) });
  return session;
}

const hub = (serialNumber: string) => ({ serialNumber } as UsbHubReport);

describe('session table', () => {
  it('routes a device to the session reporting it, and to nobody once it is no longer reported', () => {
    const table = new SessionTable<TestSession>();
    const lab1 = sessionOf(table, 'lab-1');
    const lab2 = sessionOf(table, 'lab-2');
    table.establish(lab1);
    table.establish(lab2);
    lab1.devices.replace(['pixel', 'galaxy']);
    lab2.devices.add('moto');
    expect(table.holding('pixel')).toBe(lab1);
    expect(table.holding('moto')).toBe(lab2);

    lab1.devices.replace(['galaxy']); // a snapshot without the pixel
    expect(table.holding('pixel')).toBeUndefined();
    lab2.devices.delete('moto');
    expect(table.holding('moto')).toBeUndefined();
    expect(table.holding('galaxy')).toBe(lab1);
  });

  it('keeps routing a device that moved to another gateway when the first one lets go of it', () => {
    const table = new SessionTable<TestSession>();
    const lab1 = sessionOf(table, 'lab-1');
    const lab2 = sessionOf(table, 'lab-2');
    table.establish(lab1);
    table.establish(lab2);
    lab2.devices.add('pixel'); // plugged into lab-2's host...
    lab1.devices.add('pixel'); // ...while a late report of lab-1 still names it
    expect(table.holding('pixel')).toBe(lab1);
    lab1.devices.delete('pixel');
    expect(table.holding('pixel')).toBe(lab2);
    table.remove(lab2);
    expect(table.holding('pixel')).toBeUndefined();
  });

  it("replaces a gateway's session with its newer connection: the old one stops routing and is announced removed once", () => {
    const table = new SessionTable<TestSession>();
    const removed: TestSession[] = [];
    table.on('removed', (session: TestSession) => removed.push(session));
    const old = sessionOf(table, 'lab-1');
    table.establish(old);
    old.devices.add('pixel');
    const newer = sessionOf(table, 'lab-1');
    expect(table.establish(newer)).toBe(old);
    expect(table.holding('pixel')).toBeUndefined(); // until the newer connection reports it
    old.devices.add('galaxy'); // a late report of the replaced session routes nothing
    expect(table.holding('galaxy')).toBeUndefined();
    table.remove(old); // the replaced session ends: the newer one stays
    expect(table.all()).toEqual([newer]);
    expect(removed).toEqual([old]);

    newer.devices.add('pixel');
    expect(table.holding('pixel')).toBe(newer);
    expect(table.ofGateway('id-lab-1')).toEqual([newer]);
  });

  it('routes a USB hub to the session whose last report lists it', () => {
    const table = new SessionTable<TestSession>();
    const lab1 = sessionOf(table, 'lab-1');
    table.establish(lab1);
    expect(table.holdingUsbHub('CB-1')).toBeUndefined();
    lab1.usbHubs = [hub('CB-1'), hub('CB-2')];
    expect(table.holdingUsbHub('CB-2')).toBe(lab1);
    table.remove(lab1);
    expect(table.holdingUsbHub('CB-2')).toBeUndefined();
  });
});
