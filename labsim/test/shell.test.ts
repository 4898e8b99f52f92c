import { LabWorld, specFromPreset } from '../src';
import { spawn } from 'node:child_process';
import { adbOn, startWorld } from './helpers';

describe('adb connect + shell against a simulated Pixel 7', () => {
  let world: LabWorld;
  let adb: ReturnType<typeof adbOn>;
  let adbSerial: string;

  beforeAll(async () => {
    world = await startWorld();
    const d = await world.addAndroidDevice(specFromPreset('pixel-7', 0));
    adbSerial = d.adbSerial;
    adb = adbOn(world, adbSerial);
  });
  afterAll(() => world?.stop());

  test('adb devices -l lists the device with product/model/device', async () => {
    const r = await world.adbCli.run(['devices', '-l']);
    const line = r.stdout.split('\n').find((l) => l.startsWith(adbSerial + ' '));
    expect(line).toMatch(/\sdevice product:panther model:Pixel_7 device:panther transport_id:\d+/);
  });

  test('shell v2: getprop returns the model, exit code 0', async () => {
    const r = await adb('shell', 'getprop', 'ro.product.model');
    expect(r).toEqual({ stdout: 'Pixel 7\n', stderr: '', code: 0 });
  });

  test('shell v2: stderr and a non-zero exit code propagate', async () => {
    const r = await adb('shell', 'echo boom >&2; exit 3');
    expect(r.stderr).toBe('boom\n');
    expect(r.stdout).toBe('');
    expect(r.code).toBe(3);
  });

  test('shell v2: stdin reaches the command and close-stdin ends it', async () => {
    const child = spawn('adb', ['-P', String(world.adbServerPort), '-s', adbSerial, 'shell', 'tr a-z A-Z'], { env: { ...process.env, ...world.env() } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stdin.end('piped through\n');
    const code = await new Promise((r) => child.on('close', r));
    expect(out).toBe('PIPED THROUGH\n');
    expect(code).toBe(0);
  });

  test('shell v1 (adb shell -x, what adbkit uses): output merged, no exit code', async () => {
    const r = await adb('shell', '-x', 'getprop ro.serialno; echo err >&2; false');
    expect(r.stdout).toBe(`${world.device(adbSerial).spec.serial}\nerr\n`);
    expect(r.code).toBe(0);
  });

  test('getprop without arguments prints the sorted [key]: [value] table', async () => {
    const r = await adb('shell', 'getprop');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(60);
    for (const l of lines) expect(l).toMatch(/^\[[^\]]+\]: \[.*\]$/);
    const keys = lines.map((l) => l.slice(1, l.indexOf(']')));
    expect([...keys].sort()).toEqual(keys);
    expect(r.stdout).toContain('[ro.build.version.sdk]: [34]');
    expect(r.stdout).toContain('[sys.boot_completed]: [1]');
  });

  test('adbkit-style commands: quoting, redirections, boot-completed loop', async () => {
    expect((await adb('shell', '-x', 'pm path com.android.chrome 2>/dev/null')).stdout).toBe('package:/product/app/Chrome/Chrome.apk\n');
    expect((await adb('shell', '-x', 'pm path com.nope 2>/dev/null')).stdout).toBe('');
    // adbkit's waitBootComplete reads until it sees "1", then closes the stream.
    const started = Date.now();
    const r = await adb('shell', '-x', 'while getprop sys.boot_completed 2>/dev/null; do sleep 1; done | head -1');
    expect(r.stdout).toBe('1\n');
    expect(Date.now() - started).toBeLessThan(5000); // the loop ends once head closes the pipe
    expect((await adb('shell', 'settings get global device_name')).stdout).toBe('Pixel 7\n');
    expect((await adb('shell', 'settings get global no_such_key')).stdout).toBe('null\n');
    expect((await adb('shell', 'wm size')).stdout).toBe('Physical size: 1080x2400\n');
    expect((await adb('shell', 'wm density')).stdout).toBe('Physical density: 420\n');
    expect((await adb('shell', 'cat /sys/class/net/wlan0/address')).stdout).toMatch(/^f4:60:e2(:[0-9a-f]{2}){3}\n$/);
  });

  test('dumpsys battery reflects setBattery', async () => {
    await world.setBattery(adbSerial, { level: 37, usbPowered: false });
    const out = (await adb('shell', 'dumpsys battery')).stdout;
    expect(out).toMatch(/^Current Battery Service state:\n/);
    expect(out).toContain('  USB powered: false\n');
    expect(out).toContain('  level: 37\n');
    expect(out).toContain('  status: 3\n');
  });

  test('logcat -d -v threadtime prints parseable lines and honours -t', async () => {
    const r = await adb('shell', '-x', 'logcat -d -v threadtime -t 3');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('--------- beginning of main');
    expect(lines.slice(1)).toHaveLength(3);
    for (const l of lines.slice(1)) {
      expect(l).toMatch(/^(\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3})\s+(\d+)\s+(\d+) ([VDIWEFS]) (.*?)\s*: (.*)$/);
    }
  });
});
