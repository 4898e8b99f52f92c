/**
 * Retain tickets end to end (issue item 5): the hub signs a DeviceAccessTicket, the real gateway of a real lab
 * verifies it on its own with the key and retain ids the hub sent over the link.
 */
import { startTestLab, waitFor, type TestLab } from '../support/lab';

interface Ticket {
  authenticator: string; gatewayAddress: string; gatewayPort: number; deviceVendorUniqueIdentifier: string;
  serialNumber: string;
}

let lab: TestLab;
let admin: { login: string; token: string };
let other: { login: string; token: string };

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 2 });
  admin = lab.admin;
  other = await lab.addUser('other.tester@example.com', ['Administrator']);
}, 90_000);

afterAll(() => lab?.stop(), 60_000);

const form = (body: string): RequestInit => ({
  method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

async function retain(who: { login: string; token: string }, serial: string): Promise<Ticket> {
  const body = await (await lab.api(who, '/Device', form(`action=Retain&id=${serial}`))).json() as { data: Ticket };
  expect(body).toMatchObject({ isSuccess: true });
  return body.data as Ticket;
}

async function release(who: { login: string; token: string }, serial: string): Promise<void> {
  expect(await (await lab.api(who, '/Device', form(`action=Release&id=${serial}`))).json()).toEqual({ isSuccess: true });
}

/** The device's vendor unique identifier (its adb serial): the name the gateway knows it by. */
async function vuidOf(serial: string): Promise<string> {
  const devices = await (await lab.api(admin, '/Device')).json() as { serialNumber: string; vendorUniqueIdentifier: string }[];
  const device = devices.find((d) => d.serialNumber === serial);
  if (!device) throw new Error(`device ${serial} not listed`);
  return device.vendorUniqueIdentifier;
}

const verdict = (ticket: string, vuid: string) => lab.gateway.link.channels.access.tickets.verifyDeviceTicket(ticket, vuid);

/** The gateway learns a retain over the link a moment after the HTTP reply. */
async function gatewayAccepts(ticket: Ticket): Promise<void> {
  await waitFor(async () => verdict(ticket.authenticator, ticket.deviceVendorUniqueIdentifier).valid, 10_000,
    'the gateway to accept the ticket');
}

test('retain: the ticket names the gateway Hello address and the device\'s adb endpoint, and the real gateway accepts it', async () => {
  const serial = lab.devices[0].serial;
  const ticket = await retain(admin, serial);
  const vuid = await vuidOf(serial);
  expect(ticket).toMatchObject({ gatewayAddress: '127.0.0.1', serialNumber: serial, deviceVendorUniqueIdentifier: vuid });
  expect(ticket.gatewayPort).toBe(lab.gateway.adbAccess?.portOf(vuid));
  expect(ticket.gatewayPort).toBeGreaterThanOrEqual(7400);
  await gatewayAccepts(ticket);
  const accepted = verdict(ticket.authenticator, vuid);
  expect(accepted.valid && accepted.claims).toMatchObject({ vuid });
  // Retaining again by the same user is the same retain: the same ticket.
  expect((await retain(admin, serial)).authenticator).toBe(ticket.authenticator);
  await release(admin, serial);
});

test('release: the gateway rejects the ticket of the ended retain; a new retain gets a new ticket', async () => {
  const serial = lab.devices[0].serial;
  const ticket = await retain(admin, serial);
  const vuid = ticket.deviceVendorUniqueIdentifier;
  await gatewayAccepts(ticket);
  await release(admin, serial);
  await waitFor(async () => !verdict(ticket.authenticator, vuid).valid, 10_000, 'the gateway to reject the ticket');
  expect(verdict(ticket.authenticator, vuid)).toEqual({ valid: false, reason: 'the retain of this ticket has ended' });

  const again = await retain(other, serial);
  expect(again.authenticator).not.toBe(ticket.authenticator);
  await gatewayAccepts(again);
  expect(verdict(ticket.authenticator, vuid).valid).toBe(false);
  await release(other, serial);
});

test('a tampered ticket, a ticket for another device and garbage are rejected', async () => {
  const [firstSerial, secondSerial] = lab.devices.map((d) => d.serial);
  const [first, second] = [await vuidOf(firstSerial), await vuidOf(secondSerial)];
  const ticket = await retain(admin, firstSerial);
  await gatewayAccepts(ticket);
  const [payload, signature] = ticket.authenticator.split('.');
  // Claims rewritten to open the other device, signature kept.
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  const forged = `${Buffer.from(JSON.stringify({ ...claims, vuid: second })).toString('base64url')}.${signature}`;
  expect(verdict(forged, second)).toEqual({ valid: false, reason: 'bad signature' });
  // One signature bit flipped.
  const sig = Buffer.from(signature, 'base64url');
  sig[0] ^= 1;
  expect(verdict(`${payload}.${sig.toString('base64url')}`, first)).toEqual({ valid: false, reason: 'bad signature' });
  // A genuine ticket shown for another device.
  expect(verdict(ticket.authenticator, second)).toEqual({ valid: false, reason: 'ticket is for another device' });
  for (const junk of ['', 'x', 'a.b.c', '....', '\u00e9\u00e9.\u00e9']) {
    expect(verdict(junk, first)).toEqual({ valid: false, reason: 'not a device ticket' });
  }
  await release(admin, firstSerial);
});

test('a gateway that reconnects learns the current retains from Welcome', async () => {
  const serial = lab.devices[1].serial;
  const ticket = await retain(admin, serial);
  const vuid = ticket.deviceVendorUniqueIdentifier;
  await gatewayAccepts(ticket);
  await lab.stopGateway();
  await lab.restartGateway();
  await waitFor(async () => lab.gateway.link.connected, 20_000, 'the gateway to reconnect');
  expect(verdict(ticket.authenticator, vuid).valid).toBe(true);
  await release(admin, serial);
  await waitFor(async () => !verdict(ticket.authenticator, vuid).valid, 10_000, 'the gateway to reject the ticket');
}, 60_000);
