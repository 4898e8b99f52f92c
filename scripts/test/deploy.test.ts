/**
 * The deployment examples in `deploy/` fit the code: the systemd units create and own their state directory, run
 * as the user the sysusers file creates, start the gateway after usbmuxd and are sandboxed (as
 * `systemd-analyze security` rates them, where it is installed); haproxy waits for a `wait=true` call as long as
 * the hub may take to answer it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_ASYNC_JOB_TIMEOUT_MS } from '../../hub/src/domain/async-jobs';

const systemd = path.resolve(__dirname, '../../deploy/systemd');
const units = ['devicelab-hub.service', 'devicelab-gateway.service'];

/** `Key=value` settings of a unit file (a key may repeat). */
function settings(unit: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const line of readFileSync(path.join(systemd, unit), 'utf8').split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (m) found.set(m[1], [...(found.get(m[1]) ?? []), m[2]]);
  }
  return found;
}

test.each(units)('%s: its state directory is created for it, as the user the sysusers file creates', (unit) => {
  const s = settings(unit);
  const [stateDirectory] = s.get('StateDirectory') ?? [];
  expect(stateDirectory).toBeDefined();
  expect(s.get('WorkingDirectory')).toEqual([`/var/lib/${stateDirectory}`]);
  const sysusers = readFileSync(path.join(systemd, 'devicelab.sysusers.conf'), 'utf8');
  expect(sysusers).toMatch(new RegExp(`^u ${s.get('User')![0]} `, 'm'));
  for (const group of (s.get('SupplementaryGroups') ?? []).join(' ').split(/\s+/).filter(Boolean)) {
    expect(sysusers).toMatch(new RegExp(`^m ${s.get('User')![0]} ${group}$`, 'm'));
  }
});

test('the gateway starts after usbmuxd', () => {
  expect(settings('devicelab-gateway.service').get('After')!.join(' ').split(/\s+/)).toContain('usbmuxd.service');
});

const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find(existsSync);
(analyze ? test.each(units) : test.skip.each(units))('%s: systemd-analyze rates it sandboxed (exposure 3 or less)', (unit) => {
  const out = execFileSync(analyze!, ['security', '--offline=true', '--no-pager', unit], { cwd: systemd, encoding: 'utf8' });
  const exposure = Number(/Overall exposure level for \S+: ([\d.]+)/.exec(out)![1]);
  expect(exposure).toBeLessThanOrEqual(3);
});

test("haproxy waits for a wait=true call as long as the hub's async job deadline", () => {
  const cfg = readFileSync(path.resolve(__dirname, '../../deploy/haproxy/haproxy.cfg'), 'utf8');
  const seconds = (text: string) => {
    const m = /^(\d+)(ms|s|m|h)?$/.exec(text)!;
    return Number(m[1]) * ({ ms: 0.001, s: 1, m: 60, h: 3600 } as Record<string, number>)[m[2] ?? 'ms'];
  };
  const server = seconds(/^\s*timeout server (\S+)/m.exec(cfg)![1]);
  expect(server).toBeGreaterThan(DEFAULT_ASYNC_JOB_TIMEOUT_MS / 1000);
});
