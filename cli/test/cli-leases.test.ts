/**
 * The built `devicelab` binary's bookings and leases against a real lab: `reserve` books a device, `reservations`
 * lists and cancels bookings, `renew` extends the lease of a retained device up to the lab's maximum; two `retain`
 * invocations of one login get different devices or a refusal, never one device twice.
 */
import { startTestLab, type TestLab } from '../../hub/test/support/lab';
import { cliEnvironment, runCli, type CliUser } from './support/cli-process';

jest.setTimeout(180_000);

let lab: TestLab;
let tester: CliUser;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  tester = await lab.addUser('tester@example.com', ['Tester']);
}, 120_000);
afterAll(() => lab?.stop(), 60_000);

const asTester = () => cliEnvironment(lab, tester);

test('reserve, reservations, cancel', async () => {
  const serial = lab.devices[0].serial;
  const start = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const booked = await runCli(['reserve', serial, '--start', start, '--for', '2h', '--note', 'release testing'], asTester());
  expect(booked.code).toBe(0);
  const id = booked.stdout.trim();
  const listed = JSON.parse((await runCli(['reservations', '--device', serial, '--json'], asTester())).stdout) as { id: string; note: string; start: string }[];
  expect(listed).toEqual([expect.objectContaining({ id, note: 'release testing', start })]);
  const table = await runCli(['reservations'], asTester());
  expect(table.stdout).toContain('release testing');
  expect((await runCli(['reservations', '--cancel', id], asTester())).code).toBe(0);
  expect((await runCli(['reservations'], asTester())).stdout).toContain('No bookings.');
  const usage = await runCli(['reserve', serial], asTester());
  expect(usage.code).toBe(2);
});

test('renew extends a retained device\'s lease to the maximum; two retains of one login do not share the device', async () => {
  const serial = lab.devices[0].serial;
  const settings = await lab.api(lab.admin, '/Settings?update', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ leaseMaxMinutes: 45 }),
  });
  expect(((await settings.json()) as { isSuccess: boolean }).isSuccess).toBe(true);
  expect((await runCli(['retain', serial], asTester())).code).toBe(0);
  const second = await runCli(['retain', serial], asTester());
  expect(second.code).toBe(1);
  expect(second.stderr).toMatch(/another lease name.*DEVICELAB_LEASE/s);
  const renewed = await runCli(['renew', serial], asTester());
  expect(renewed.code).toBe(0);
  expect((Date.parse(renewed.stdout.trim()) - Date.now()) / 60_000).toBeCloseTo(45, 0);
  expect((await runCli(['renew', serial, '--minutes', '60'], asTester())).stderr).toMatch(/at most 45 minutes/);
  expect((await runCli(['release', serial], asTester())).code).toBe(0);
});
