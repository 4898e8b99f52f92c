/**
 * The device shell is the simulated device's, never the host's: through the real adb client it answers as the
 * shell user of a production build, over the device's own file tree and processes, and anything it does not
 * know answers as Android's shell does. It still runs every command line hosts and test tools send.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { LabWorld, specFromPreset } from '../src';
import { FACTS_SCRIPT } from '../../gateway/src/drivers/android/facts';
import { PACKAGE_LIST_SCRIPT, versionScript } from '../../gateway/src/drivers/android/installed-packages';
import { sampleScript } from '../../gateway/src/drivers/android/sampling';
import { adbOn, startWorld } from './helpers';

describe('the device shell through adb', () => {
  let world: LabWorld;
  let serial: string;
  let adb: ReturnType<typeof adbOn>;
  const hostMarker = `/tmp/labsim-device-shell-${process.pid}-${Date.now()}`;

  beforeAll(async () => {
    world = await startWorld();
    serial = (await world.addAndroidDevice(specFromPreset('pixel-7', 0))).adbSerial;
    adb = adbOn(world, serial);
  });
  afterAll(async () => {
    fs.rmSync(hostMarker, { force: true });
    await world?.stop();
  });

  test('id is the shell user of a production build, not the user running the simulator', async () => {
    const r = await adb('shell', 'id');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^uid=2000\(shell\) gid=2000\(shell\) groups=2000\(shell\),1004\(input\),.* context=u:r:shell:s0\n$/);
    expect((await adb('shell', 'id -u; whoami')).stdout).toBe('2000\nshell\n');
  });

  test("ls / lists the device's folders, not the host's", async () => {
    const names = (await adb('shell', 'ls /')).stdout.trim().split('\n');
    expect(names).toEqual(expect.arrayContaining(['system', 'data', 'sdcard', 'storage', 'proc', 'vendor']));
    for (const hostOnly of ['root', 'usr', 'home', 'tmp', 'boot']) expect(names).not.toContain(hostOnly);
  });

  test('writes and reads cannot reach host paths: /tmp and /etc are not the host folders', async () => {
    for (const command of [`touch ${hostMarker}`, `echo hi > ${hostMarker}`, `echo hi >> ${hostMarker}`, `mkdir -p ${hostMarker}`, `sh -c 'echo $(id) > ${hostMarker}'`]) {
      const r = await adb('shell', command);
      expect({ command, code: r.code }).toEqual({ command, code: 1 });
      expect(fs.existsSync(hostMarker)).toBe(false);
    }
    const passwd = await adb('shell', 'cat /etc/passwd');
    expect(passwd).toEqual({ stdout: '', stderr: 'cat: /etc/passwd: No such file or directory\n', code: 1 });
    expect((await adb('shell', 'ls /tmp')).code).toBe(1);
    expect((await adb('shell', 'cat /../../../../etc/hostname /proc/self/environ 2>&1')).stdout).not.toContain(os.hostname());
  });

  test('a link on the device means device paths, even one made by hand to a host folder', async () => {
    const link = world.device(serial).hostPath('/data/local/tmp/etc-link', false);
    fs.symlinkSync('/etc', link);
    try {
      expect(await adb('shell', 'cat /data/local/tmp/etc-link/passwd')).toEqual({ stdout: '', stderr: 'cat: /data/local/tmp/etc-link/passwd: No such file or directory\n', code: 1 });
      expect((await adb('shell', 'ls /data/local/tmp/etc-link/')).stdout).toBe('');
      expect((await adb('shell', 'echo x > /data/local/tmp/etc-link/labsim-x')).code).toBe(1);
      expect(fs.existsSync('/etc/labsim-x')).toBe(false);
    } finally {
      fs.rmSync(link);
    }
  });

  test("ps lists the device's processes: the shell's own, and with -A the system and the running apps by package", async () => {
    const own = await adb('shell', 'ps');
    const header = /^USER\s+PID\s+PPID\s+VSZ\s+RSS\s+WCHAN\s+ADDR\s+S\s+NAME$/;
    expect(own.stdout.split('\n')[0]).toMatch(header);
    expect(own.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/).pop())).toEqual(['sh', 'ps']);
    await adb('shell', 'am start -W -n org.mozilla.firefox/org.mozilla.fenix.HomeActivity');
    const all = await adb('shell', 'ps -A');
    const names = all.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/).pop());
    expect(names).toEqual(expect.arrayContaining(['init', 'system_server', 'zygote64', 'com.android.systemui', 'org.mozilla.firefox']));
    for (const hostOnly of ['node', 'jest', 'adb', 'bash', 'systemd']) expect(names).not.toContain(hostOnly);
    const chromeRow = all.stdout.split('\n').find((l) => l.endsWith(' org.mozilla.firefox'))!;
    expect((await adb('shell', 'pidof org.mozilla.firefox')).stdout.trim()).toBe(chromeRow.split(/\s+/)[1]);
    expect((await adb('shell', 'ps -o PID,NAME -A | grep firefox')).stdout).toMatch(/^\s*\d+ org\.mozilla\.firefox\n$/);
  });

  test("uname answers the device's kernel", async () => {
    const r = await adb('shell', 'uname -a; uname -r; uname -m');
    const [all, release, machine] = r.stdout.trim().split('\n');
    expect(all).toMatch(/^Linux localhost 5\.10\.\S+-android13\S* #1 SMP PREEMPT .* aarch64$/);
    expect(release).not.toBe(os.release());
    expect(machine).toBe('aarch64');
  });

  test('commands the device does not have answer as Android does: not found, 127; host binaries are not reachable', async () => {
    expect(await adb('shell', 'nosuchcmd')).toEqual({ stdout: '', stderr: '/system/bin/sh: nosuchcmd: inaccessible or not found\n', code: 127 });
    for (const hostBinary of ['/usr/bin/id', '/bin/bash', 'python3', 'node', 'perl', 'curl']) {
      const r = await adb('shell', `${hostBinary} -c true`);
      expect({ hostBinary, r }).toEqual({ hostBinary, r: { stdout: '', stderr: `/system/bin/sh: ${hostBinary}: inaccessible or not found\n`, code: 127 } });
    }
    expect((await adb('shell', 'exec /usr/bin/env; echo $(/usr/bin/whoami)')).stderr).toContain('/usr/bin/env: inaccessible or not found');
  });

  test('patterns that would backtrack for ages answer at once (the simulator shares one thread)', async () => {
    const started = Date.now();
    expect(await adb('shell', `echo ${'a'.repeat(40)}b | grep -E '(a+)+$'`)).toEqual({ stdout: '', stderr: 'grep: pattern too complex\n', code: 2 });
    const name = 'a'.repeat(200);
    expect((await adb('shell', `touch /data/local/tmp/${name}; echo /data/local/tmp/${'*a'.repeat(30)}*b`)).stdout).toBe(`/data/local/tmp/${'*a'.repeat(30)}*b\n`);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test('a loop that never ends holds no other command up, and stops when its stream closes', async () => {
    const spinning = world.adbCli.run(['-s', serial, 'shell', 'while true; do :; done'], 4_000);
    const started = Date.now();
    expect((await adb('shell', 'getprop ro.product.model')).stdout).toBe('Pixel 7\n');
    expect(Date.now() - started).toBeLessThan(3_000);
    await spinning;
  });
});

describe('the shell language hosts send', () => {
  let world: LabWorld;
  let adb: ReturnType<typeof adbOn>;

  beforeAll(async () => {
    world = await startWorld();
    adb = adbOn(world, (await world.addAndroidDevice(specFromPreset('pixel-7', 0))).adbSerial);
  });
  afterAll(() => world?.stop());

  test.each([
    ['echo one >&2; echo two 2>&1; false && echo never || echo after', 'two\nafter\n', 'one\n', 0],
    ["echo 'single quoted; not a separator' \"double \\\"quoted\\\"\" plain\\ word", 'single quoted; not a separator double "quoted" plain word\n', '', 0],
    ['pm path com.nope; echo status-follows; exit 3', 'status-follows\n', '', 3],
    ['cat /proc/nope 2>/dev/null || cat /sys/class/net/wlan0/address | wc -l', '1\n', '', 0],
    ['x=$(getprop ro.product.model); echo "[$x]" `echo back` $((6 * 7))', '[Pixel 7] back 42\n', '', 0],
    ['for f in /sys/devices/system/cpu/cpufreq/policy*; do basename $f; done | sort -r | head -1', 'policy7\n', '', 0],
    ['i=0; while [ $i -lt 3 ]; do i=$((i + 1)); done; echo $i; until true; do echo never; done', '3\n', '', 0],
    ['if getprop ro.nope | grep -q .; then echo set; elif [ -d /sdcard/Download ]; then echo dir; else echo none; fi', 'dir\n', '', 0],
    ['cd /data/local/tmp && echo a > f && echo b >> f && cat f | tr a-z A-Z && rm f && ls', 'A\nB\n', '', 0],
    ['{ echo x; echo y; } > /data/local/tmp/g; (cd /; cat /data/local/tmp/g | wc -l); wc -c < /data/local/tmp/g', '2\n4\n', '', 0],
    ['printf "%s=%03d\\n" a 7 b 42', 'a=007\nb=042\n', '', 0],
    ['sh -c \'echo "$1-$2"\' sh one two; echo $?', 'one-two\n0\n', '', 0],
    ['pgrep -x system_server && pidof system_server; ime list -s', '600\n600\ncom.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME\n', '', 0],
    ['which ls getprop cd', '/system/bin/ls\n/system/bin/getprop\n', '', 1],
    ['if', '', '/system/bin/sh: syntax error: unexpected EOF\n', 1],
  ])('%s', async (command, stdout, stderr, code) => {
    expect(await adb('shell', command)).toEqual({ stdout, stderr, code });
  });

  test('every command line the gateway sends runs without an unknown command', async () => {
    for (const command of [FACTS_SCRIPT, PACKAGE_LIST_SCRIPT, versionScript(['com.android.chrome']), sampleScript(undefined), sampleScript('com.android.chrome'), 'getprop sys.boot_completed', 'logcat -d -v threadtime -t 1']) {
      const r = await adb('shell', command);
      expect({ command, stderr: r.stderr, code: r.code }).toEqual({ command, stderr: '', code: 0 });
    }
  });

  test('df /data prints a toybox table the facts parser reads', async () => {
    const [header, row] = (await adb('shell', 'df /data')).stdout.trimEnd().split('\n');
    expect(header).toMatch(/^Filesystem\s+1K-blocks\s+Used\s+Available\s+Use% Mounted on$/);
    const f = row.split(/\s+/);
    expect(f[f.length - 1]).toBe('/data');
    expect(Number(f[1])).toBeGreaterThan(Number(f[3]));
  });

  test('the interactive shell runs the lines it reads', async () => {
    const child = spawn('adb', ['-P', String(world.adbServerPort), '-s', (await world.adbCli.devices()).keys().next().value as string, 'shell'], { env: { ...process.env, ...world.env() } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stdin.end('cd /sdcard\npwd\nif true; then\necho multi-line\nfi\nexit 4\necho never\n');
    const code = await new Promise((r) => child.on('close', r));
    expect(out).toBe('/sdcard\nmulti-line\n');
    expect(code).toBe(4);
  });
});
