/**
 * The uhubctl driver against a fake `uhubctl` that prints the real tool's text (testbench.md 2.3):
 * Off and Data switch port power, Charge and reboot fail with a clear message, a missing hub is reported.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@devicelab/shared';
import { UhubctlHub } from '../../src/usbhubs/uhubctl/uhubctl-hub';
import { parseUhubctlStatus } from '../../src/usbhubs/uhubctl/uhubctl-status';

const logger = createLogger('test', 'silent');
const fakeBin = path.join(__dirname, 'support', 'bin');
let dir: string;
let stateFile: string;
/** The fake tool behind a wrapper that names its state file (the driver passes no environment of its own). */
let uhubctl: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'uhubctl-'));
  stateFile = path.join(dir, 'state.json');
  writeFileSync(stateFile, JSON.stringify({ hubs: [{
    location: '1-1.4', description: '05e3:0608 USB2.0 Hub, USB 2.10, 4 ports, ppps',
    ports: [{ power: true, device: '22d9:2769 OPPO CPH2325' }, { power: true }, { power: false }, { power: true }],
  }] }));
  uhubctl = path.join(dir, 'uhubctl');
  writeFileSync(uhubctl, `#!/bin/sh\nFAKE_UHUBCTL_STATE='${stateFile}' exec '${path.join(fakeBin, 'uhubctl')}' "$@"\n`, { mode: 0o755 });
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const powered = () => (JSON.parse(readFileSync(stateFile, 'utf8')) as { hubs: Array<{ ports: Array<{ power: boolean }> }> })
  .hubs[0].ports.map((p) => p.power);

it('parses current and new status blocks', () => {
  const hubs = parseUhubctlStatus([
    'Current status for hub 1-8 [05e3:0608 USB2.0 Hub, USB 2.10, 4 ports]',
    '  Port 1: 0503 power highspeed enable connect [22d9:2769 OPPO CPH2325 …]',
    '  Port 2: 0100 power',
    '  Port 3: 0000 off',
    'Sent power off request',
    'New status for hub 1-8 [05e3:0608 USB2.0 Hub, USB 2.10, 4 ports]',
    '  Port 1: 0000 off',
  ].join('\n'));
  expect(hubs).toHaveLength(2);
  expect(hubs[0].ports).toEqual([
    { port: 1, powered: true, connected: true, device: '22d9:2769 OPPO CPH2325 …' },
    { port: 2, powered: true, connected: false, device: '' },
    { port: 3, powered: false, connected: false, device: '' },
  ]);
  expect(hubs[1].ports).toEqual([{ port: 1, powered: false, connected: false, device: '' }]);
});

it('reads the hub, switches one port and every port between Off and Data', async () => {
  const hub = new UhubctlHub({ location: '1-1.4', logger, bin: uhubctl });
  await hub.start();
  try {
    expect(hub.status()).toMatchObject({ serialNumber: '1-1.4', isErrored: false, description: expect.stringContaining('4 ports') });
    expect(hub.status().ports.map((p) => p.state)).toEqual(['Data', 'Data', 'Off', 'Data']);
    expect(hub.status().ports[0]).toMatchObject({ attached: true, flags: ['Sync', 'Attached'] });
    await hub.setPortMode(1, 'Off');
    expect(powered()).toEqual([false, true, false, true]);
    expect(hub.status().ports.map((p) => p.state)).toEqual(['Off', 'Data', 'Off', 'Data']);
    await hub.setPortMode(undefined, 'Data');
    expect(powered()).toEqual([true, true, true, true]);
    await hub.setPortMode(undefined, 'Off');
    expect(powered()).toEqual([false, false, false, false]);
  } finally {
    await hub.stop();
  }
});

it('refuses Charge, reboot and unknown ports with clear messages and changes nothing', async () => {
  const hub = new UhubctlHub({ location: '1-1.4', logger, bin: uhubctl });
  await hub.start();
  try {
    await expect(hub.setPortMode(2, 'Charge')).rejects.toThrow('Hub 1-1.4 is switched by uhubctl and has no Charge mode: use Off or Data');
    await expect(hub.reboot()).rejects.toThrow('Hub 1-1.4 is switched by uhubctl and cannot be rebooted');
    await expect(hub.setPortMode(7, 'Off')).rejects.toThrow('Hub 1-1.4 has no port 7 (ports 1..4)');
    expect(powered()).toEqual([true, true, false, true]);
  } finally {
    await hub.stop();
  }
});

it('reports a hub uhubctl cannot find as errored', async () => {
  const hub = new UhubctlHub({ location: '9-9', logger, bin: uhubctl });
  await hub.start();
  try {
    expect(hub.status()).toMatchObject({ isErrored: true, errorMessage: expect.stringContaining('No compatible devices detected!') });
  } finally {
    await hub.stop();
  }
});
