/**
 * The Android driver through the REAL adb server (Debian adb) against labsim devices speaking adbd.
 * LabWorld gives this file its own adb server port and HOME.
 */
import { readdirSync } from 'node:fs';
import { LabWorld, specFromPreset } from '@devicelab/labsim';
import { AndroidDriver } from '../../src/drivers/android/android-driver';
import { DeviceCommandError } from '../../src/drivers/device-driver';
import { startDriverLab, type DriverLab } from '../support/driver-lab';
import type { Recorder } from '../support/recorder';
import { fixture } from '../../../scripts/jest/shared-files';

const CONTACT_MANAGER = fixture('ContactManager.apk');
const CONTACT_PACKAGE = 'com.example.android.contactmanager';

describe('AndroidDriver over adb + labsim', () => {
  let world: LabWorld;
  let driver: AndroidDriver;
  let recorder: Recorder;
  let lab: DriverLab;

  beforeAll(async () => {
    lab = await startDriverLab();
    ({ world, driver, recorder } = lab);
  });

  afterAll(() => lab?.stop());

  it('reports an added device as Booting then Ready with facts from getprop', async () => {
    const spec = specFromPreset('pixel-7', 0);
    const snap = await world.addAndroidDevice(spec);
    const ready = await recorder.waitReadiness(snap.adbSerial, 'Ready');
    // adb lists a TCP device `offline` while connecting, then `device`; Booting until sys.boot_completed = 1.
    const seen = recorder.readinessOf(snap.adbSerial);
    expect(seen.indexOf('Booting')).toBeGreaterThanOrEqual(0);
    expect(seen.indexOf('Booting')).toBeLessThan(seen.indexOf('Ready'));
    const state = ready.type === 'changed' ? ready.state : undefined;
    const props = world.device(spec.serial).props();
    expect(state).toMatchObject({
      vendorUniqueIdentifier: snap.adbSerial,
      operatingSystem: 'Android',
      serialNumber: props['ro.serialno'],
      model: props['ro.product.model'],
      manufacturer: props['ro.product.manufacturer'],
      operatingSystemVersion: props['ro.build.version.release'],
      operatingSystemBuild: props['ro.build.id'],
      productType: props['ro.product.device'],
      hardwareModel: props['ro.hardware'],
      formFactor: 'Phone',
      vendorDeviceName: spec.deviceName,
      macAddress: spec.wifiMac.toUpperCase(),
      bluetoothAddress: spec.bluetoothMac.toUpperCase(),
      batteryPercent: spec.battery.level,
    });
    expect(state?.diskSpace).toBeGreaterThan(0);
    expect(state?.properties?.length).toBe(Object.keys(props).length);
    expect(state?.properties).toContainEqual({ name: 'ro.product.model', value: props['ro.product.model'] });
    // Ready goes out as soon as the facts are read; the installed packages follow in the next report.
    const withPackages = await recorder.waitFor((e) => e.type === 'changed' && e.state.vendorUniqueIdentifier === snap.adbSerial && !!e.state.packages);
    const packages = withPackages.type === 'changed' ? withPackages.state.packages : undefined;
    expect(withPackages).toMatchObject({ state: { readiness: 'Ready', model: props['ro.product.model'] } });
    const firefox = packages?.find((p) => p.identifier === 'org.mozilla.firefox');
    expect(firefox).toMatchObject({ system: false, version: '121.1.0', buildVersion: '2016003655' });
    expect(packages?.some((p) => p.system)).toBe(true);
    expect(driver.snapshot().map((d) => d.vendorUniqueIdentifier)).toContain(snap.adbSerial);
  });

  it('reports a tablet by form factor', async () => {
    const snap = await world.addAndroidDevice(specFromPreset('pixel-tablet', 5));
    const ready = await recorder.waitReadiness(snap.adbSerial, 'Ready');
    expect(ready.type === 'changed' && ready.state.formFactor).toBe('Tablet');
  });

  it('maps unauthorized, then Ready once the key is accepted', async () => {
    const spec = specFromPreset('galaxy-s23', 1);
    const snap = await world.addAndroidDevice(spec, { auth: 'reject' });
    await recorder.waitReadiness(snap.adbSerial, 'Unauthorized');
    await expect(driver.launch(snap.adbSerial, 'org.mozilla.firefox')).rejects.toThrow(/not ready \(Unauthorized/);
    const from = recorder.events.length;
    await world.setUnauthorized(spec.serial, false);
    await recorder.waitReadiness(snap.adbSerial, 'Ready', 15_000, from);
  });

  it('unplug (adb disconnect) removes the device; plugging again brings it back', async () => {
    const spec = specFromPreset('moto-g9-play', 2);
    const snap = await world.addAndroidDevice(spec);
    await recorder.waitReadiness(snap.adbSerial, 'Ready');
    let from = recorder.events.length;
    await world.unplug(spec.serial);
    await recorder.waitRemoved(snap.adbSerial, 10_000, from);
    expect(driver.snapshot().map((d) => d.vendorUniqueIdentifier)).not.toContain(snap.adbSerial);
    await expect(driver.readLog(snap.adbSerial, 10)).rejects.toThrow(/not connected/);
    from = recorder.events.length;
    await world.plug(spec.serial);
    await recorder.waitReadiness(snap.adbSerial, 'Ready', 15_000, from);
  });

  describe('apps', () => {
    let serial: string;
    let hwSerial: string;
    beforeAll(async () => {
      const spec = specFromPreset('pixel-7', 3);
      hwSerial = spec.serial;
      serial = (await world.addAndroidDevice(spec)).adbSerial;
      await recorder.waitReadiness(serial, 'Ready');
    });

    it('installs ContactManager, lists it, launches it, uninstalls it', async () => {
      // The install resolves with the state the device has after it: the package is in it, read from the device.
      const installed = await driver.install(serial, CONTACT_MANAGER);
      expect(installed.packages?.find((p) => p.identifier === CONTACT_PACKAGE)).toMatchObject({ system: false, version: '1.0' });
      const described = await driver.readPackages(serial);
      expect(described.packages?.find((p) => p.identifier === CONTACT_PACKAGE)).toMatchObject({
        system: false, version: '1.0', buildVersion: '1',
      });
      expect((await world.installedPackages(hwSerial, { thirdPartyOnly: true })).map((p) => p.packageName)).toContain(CONTACT_PACKAGE);

      const output = await driver.launch(serial, CONTACT_PACKAGE, { arguments: '--es greeting hello' });
      expect(output).toMatch(/Status: ok/);
      const launches = await world.amStartLog(hwSerial);
      const last = launches[launches.length - 1];
      expect(last).toMatchObject({ tool: 'am', ok: true, component: `${CONTACT_PACKAGE}/${CONTACT_PACKAGE}.ContactManager` });
      expect(last.commandLine).toContain('--es greeting hello');
      expect(last.commandLine).toContain('-W');

      // force: uninstall first, then install again
      await driver.install(serial, CONTACT_MANAGER, { force: true, packageId: CONTACT_PACKAGE });
      const uninstalled = await driver.uninstall(serial, CONTACT_PACKAGE);
      expect(uninstalled.packages?.map((p) => p.identifier)).not.toContain(CONTACT_PACKAGE);
      expect((await world.installedPackages(hwSerial)).map((p) => p.packageName)).not.toContain(CONTACT_PACKAGE);
      const after = await driver.readPackages(serial);
      expect(after.packages?.map((p) => p.identifier)).not.toContain(CONTACT_PACKAGE);
    });

    it('passes launch arguments to am as words, never as shell syntax', async () => {
      await driver.install(serial, CONTACT_MANAGER);
      const output = await driver.launch(serial, CONTACT_PACKAGE, { arguments: `--es note "two words"; echo INJECTED` });
      expect(output).not.toMatch(/^INJECTED$/m);
      const last = (await world.amStartLog(hwSerial)).at(-1)!;
      expect(last.args).toEqual(expect.arrayContaining(['--es', 'note', 'two words;', 'echo', 'INJECTED']));
      await driver.uninstall(serial, CONTACT_PACKAGE);
    });

    it('installs on Android 6 too (no `cmd` feature: push, then pm install), and streams into Android 14', async () => {
      const spec = specFromPreset('moto-g9-play', 7, { sdk: 23, androidVersion: '6.0.1' });
      const oldSerial = (await world.addAndroidDevice(spec)).adbSerial;
      await recorder.waitReadiness(oldSerial, 'Ready');
      for (const [adbSerial, hardwareSerial] of [[oldSerial, spec.serial], [serial, hwSerial]]) {
        const installed = await driver.install(adbSerial, CONTACT_MANAGER);
        expect(installed.packages?.find((p) => p.identifier === CONTACT_PACKAGE)).toMatchObject({ system: false, version: '1.0' });
        expect((await world.installedPackages(hardwareSerial, { thirdPartyOnly: true })).map((p) => p.packageName)).toContain(CONTACT_PACKAGE);
        // Nothing is left in the device's temporary folder either way.
        expect(readdirSync(world.device(hardwareSerial).hostPath('/data/local/tmp')).filter((f) => f.endsWith('.apk'))).toEqual([]);
        await driver.uninstall(adbSerial, CONTACT_PACKAGE);
      }
    });

    it('surfaces install and uninstall failure texts', async () => {
      await world.failNextInstall(hwSerial, 'INSTALL_FAILED_INSUFFICIENT_STORAGE');
      const err = await driver.install(serial, CONTACT_MANAGER).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DeviceCommandError);
      expect((err as DeviceCommandError).message).toMatch(/^Failure \[INSTALL_FAILED_INSUFFICIENT_STORAGE/);
      expect((err as DeviceCommandError).code).toBe('INSTALL_FAILED_INSUFFICIENT_STORAGE');
      await expect(driver.uninstall(serial, CONTACT_PACKAGE)).rejects.toThrow(/^Failure \[/);
    });

    it('rejects launching an app that is not installed and odd package names', async () => {
      await expect(driver.launch(serial, 'com.not.installed')).rejects.toThrow(DeviceCommandError);
      await expect(driver.launch(serial, "x'; reboot; '")).rejects.toThrow(/Invalid application identifier/);
    });

    it('reads the log', async () => {
      const log = await driver.readLog(serial, 5);
      const lines = log.split('\n').filter((l) => /^\d\d-\d\d /.test(l));
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.length).toBeLessThanOrEqual(5);
    });

    it('reboot: Booting, then Ready again after boot completes', async () => {
      const from = recorder.events.length;
      await driver.reboot(serial);
      await recorder.waitReadiness(serial, 'Booting', 5_000, from);
      await recorder.waitReadiness(serial, 'Ready', 20_000, from);
      expect(world.devices().find((d) => d.adbSerial === serial)?.bootCompleted).toBe(true);
      await expect(driver.readLog(serial, 5)).resolves.toMatch(/Boot completed|beginning/);
    });
  });

  it('re-tracks after the adb server is restarted', async () => {
    const spec = specFromPreset('nokia-7.1', 4);
    const snap = await world.addAndroidDevice(spec);
    await recorder.waitReadiness(snap.adbSerial, 'Ready');
    let from = recorder.events.length;
    await world.adbCli.run(['kill-server']);
    // The new server (started by adbkit on re-track) knows no TCP devices: every device is removed.
    await recorder.waitRemoved(snap.adbSerial, 15_000, from);
    from = recorder.events.length;
    await world.plug(spec.serial, 20_000);
    await recorder.waitReadiness(snap.adbSerial, 'Ready', 20_000, from);
  });
});
