/**
 * The Cambrionix driver against the simulated hub through real pseudo-terminals (socat): every command and
 * error path of the CLI framing, a hub reboot, and an unplug in the middle of a command.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SimCambrionixHub } from '@devicelab/labsim';
import { createLogger } from '@devicelab/shared';
import { CambrionixHub } from '../../src/usbhubs/cambrionix/cambrionix-hub';
import { CambrionixCommandError, CliSession } from '../../src/usbhubs/cambrionix/cli-session';

const logger = createLogger('test', 'silent');
let dir: string;
let sim: SimCambrionixHub;

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'cbrx-'));
  sim = new SimCambrionixHub({ serial: 'CBX00042', ports: 8, path: path.join(dir, 'ttyHUB'), rebootMs: 500 });
  // Ports 1 and 3 carry devices: 40 % and full batteries.
  sim.model.connect(1, { attached: () => sim.model.mode(1) !== 'o', batteryLevel: () => 40 });
  sim.model.connect(3, { attached: () => sim.model.mode(3) !== 'o', batteryLevel: () => 100 });
  await sim.start();
});

afterEach(async () => {
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('CLI session framing', () => {
  it('strips the echo and the prompt, and answers one command at a time', async () => {
    const session = await CliSession.open({ path: sim.path });
    try {
      const [id, state, modeAnswer] = await Promise.all([
        session.command('id'), session.command('state'), session.command('mode c 2'),
      ]);
      expect(id).toEqual([expect.stringContaining('sn:CBX00042')]);
      expect(state).toHaveLength(8);
      expect(state[0]).toMatch(/^ 1, 0430, A S, 0, 0, x, 0\.00$/);
      expect(modeAnswer).toEqual([]);
      expect(sim.model.mode(2)).toBe('c');
    } finally {
      await session.close();
    }
  });

  it('turns *Ennn lines into errors that name the code, and keeps working after them', async () => {
    const session = await CliSession.open({ path: sim.path });
    try {
      await expect(session.command('mode x 1')).rejects.toThrow(CambrionixCommandError);
      await expect(session.command('mode x 1')).rejects.toMatchObject({ code: 'E421' });
      await expect(session.command('state 9')).rejects.toThrow(/E410: Port number must be 1\.\.8/);
      await expect(session.command('frobnicate')).rejects.toThrow(/E100/);
      expect(await session.command('state 1')).toEqual([expect.stringMatching(/^ 1, /)]);
    } finally {
      await session.close();
    }
  });

  it('times out a command that gets no prompt, then resyncs with ETX for the next one', async () => {
    const session = await CliSession.open({ path: sim.path, commandTimeoutMs: 300 });
    try {
      const started = Date.now();
      sim.hung = true;
      await expect(session.command('state', 300)).rejects.toMatchObject({ code: 'timeout' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      sim.hung = false;
      expect(await session.command('state 2')).toEqual([expect.stringMatching(/^ 2, /)]);
    } finally {
      await session.close();
    }
  });
});

describe('CambrionixHub controller', () => {
  const open = async () => {
    const hub = new CambrionixHub({ path: sim.path, logger, pollIntervalMs: 200, reopenDelayMs: 100, commandTimeoutMs: 500 });
    await hub.start();
    return hub;
  };

  it('identifies the hub and reads health and every port with its flags', async () => {
    const hub = await open();
    try {
      const status = hub.status();
      expect(status).toMatchObject({
        serialNumber: 'CBX00042', model: 'PP8S', firmware: '1.68', firmwareDate: 'Feb 14 2017 17:30:26',
        description: 'cambrionix PP8S 8 Port USB Charge+Sync', isErrored: false, errorMessage: '',
      });
      expect(status.fiveVoltNow).toBeGreaterThan(4.5);
      expect(status.fiveVoltMin).toBeLessThanOrEqual(status.fiveVoltNow);
      expect(status.fiveVoltMax).toBeGreaterThanOrEqual(status.fiveVoltNow);
      expect(status.ports).toHaveLength(8);
      expect(status.ports[0]).toMatchObject({ port: 1, state: 'Data', attached: true, milliamps: 430, flags: ['Attached', 'Sync'] });
      expect(status.ports[1]).toMatchObject({ port: 2, state: 'Data', attached: false, milliamps: 0, flags: ['Detached', 'Sync'] });
    } finally {
      await hub.stop();
    }
  });

  it('switches ports to Charge, Off and Data, one port or all, and reads charging and finished', async () => {
    const hub = await open();
    try {
      await hub.setPortMode(1, 'Charge');
      await hub.setPortMode(3, 'Charge');
      let ports = (await hub.refresh()).ports;
      expect(ports[0]).toMatchObject({ state: 'Charge', milliamps: 1950, flags: ['Attached', 'ChargeCharging'] });
      expect(ports[2]).toMatchObject({ state: 'Charge', milliamps: 35, flags: ['Attached', 'ChargeFinished'] });
      expect(ports[1]).toMatchObject({ state: 'Data' });
      await hub.setPortMode(undefined, 'Off');
      ports = (await hub.refresh()).ports;
      expect(ports.map((p) => p.state)).toEqual(Array(8).fill('Off'));
      expect(ports[0]).toMatchObject({ milliamps: 0, flags: ['Detached', 'Off'] });
      await hub.setPortMode(undefined, 'Data');
      expect((await hub.refresh()).ports.map((p) => p.state)).toEqual(Array(8).fill('Data'));
      await expect(hub.setPortMode(9, 'Off')).rejects.toThrow('Hub CBX00042 has no port 9 (ports 1..8)');
    } finally {
      await hub.stop();
    }
  });

  it('reads the theft flag when an attached device disappears from a powered port', async () => {
    let present = true;
    sim.model.connect(5, { attached: () => present, batteryLevel: () => 70 });
    const hub = await open();
    try {
      expect((await hub.refresh()).ports[4]).toMatchObject({ attached: true, flags: ['Attached', 'Sync'] });
      present = false;
      expect((await hub.refresh()).ports[4]).toMatchObject({ attached: false, state: 'Data', flags: ['Detached', 'Theft', 'Sync'] });
    } finally {
      await hub.stop();
    }
  });

  it('reconnects by itself after a reboot, restores the modes it set, and clears the rebooted flag', async () => {
    const hub = await open();
    try {
      await hub.setPortMode(2, 'Off');
      const disconnected = new Promise((resolve) => hub.once('disconnected', resolve));
      await hub.reboot();
      await disconnected;
      expect(hub.status()).toMatchObject({ isErrored: true, errorMessage: expect.stringMatching(/^Disconnected/) });
      await expect(hub.setPortMode(1, 'Off')).rejects.toThrow(/is not connected/);
      await until(() => !hub.status().isErrored, 10_000, 'the hub back after its reboot');
      await until(() => sim.commandLog.includes('crf'), 5_000, 'crf');
      expect(sim.model.mode(2)).toBe('o');
      const ports = (await hub.refresh()).ports;
      expect(ports[1].state).toBe('Off');
      expect(ports.some((p) => p.flags.includes('Rebooted'))).toBe(false);
      expect(hub.status().uptimeSeconds).toBeLessThan(10);
    } finally {
      await hub.stop();
    }
  });

  it('notices an unplug in the middle of a command, fails the command, and reconnects when plugged back', async () => {
    const hub = await open();
    try {
      sim.hung = true;
      const pending = hub.setPortMode(1, 'Charge');
      await new Promise((resolve) => setTimeout(resolve, 100));
      await sim.unplug();
      await expect(pending).rejects.toThrow(/did not answer|lost|not connected|failed/);
      await until(() => hub.status().isErrored, 5_000, 'the unplug to be noticed');
      expect(hub.status().ports.every((p) => p.state === 'Unknown')).toBe(true);
      sim.hung = false;
      await sim.plug();
      await until(() => !hub.status().isErrored, 10_000, 'the hub back after plugging it in');
      expect((await hub.refresh()).ports).toHaveLength(8);
    } finally {
      await hub.stop();
    }
  });

  it('reports a hub path that does not exist as errored and keeps trying', async () => {
    const hub = new CambrionixHub({ path: path.join(dir, 'absent'), logger, pollIntervalMs: 200, reopenDelayMs: 100 });
    await hub.start();
    try {
      expect(hub.status()).toMatchObject({ isErrored: true, errorMessage: expect.stringContaining('Cannot open') });
      await expect(hub.setPortMode(1, 'Off')).rejects.toThrow(/is not connected/);
    } finally {
      await hub.stop();
    }
  });
});
