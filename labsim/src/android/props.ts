/**
 * getprop table for a spec, modelled on a real Android 14 user build
 * (device-data.md 1.1) and adjusted per device and release.
 */
import type { AndroidDeviceSpec } from './spec';

export function buildProps(spec: AndroidDeviceSpec, bootCompleted: boolean): Record<string, string> {
  const abis64 = spec.cpu.abis.filter((a) => a.startsWith('arm64') || a.startsWith('x86_64'));
  const abis32 = spec.cpu.abis.filter((a) => !abis64.includes(a));
  const fingerprint = `${spec.brand}/${spec.product}/${spec.device}:${spec.androidVersion}/${spec.buildId}/${spec.buildIncremental}:user/release-keys`;
  const buildDate = new Date(spec.buildDateUtc * 1000).toUTCString().replace(/^(\w+), (\d+) (\w+) (\d+) (.*) GMT$/, '$1 $3 $2 $5 UTC $4');
  const props: Record<string, string> = {
    'dalvik.vm.heapgrowthlimit': spec.memTotalKb > 6_000_000 ? '256m' : '192m',
    'dalvik.vm.heapsize': '512m',
    'dev.bootcomplete': bootCompleted ? '1' : '',
    'gsm.operator.alpha': spec.operator?.name ?? '',
    'gsm.operator.numeric': spec.operator?.numeric ?? '',
    'gsm.sim.state': spec.operator ? 'LOADED' : 'ABSENT',
    'net.bt.name': 'Android',
    'persist.sys.dalvik.vm.lib.2': 'libart.so',
    'persist.sys.locale': 'en-US',
    'persist.sys.timezone': spec.timezone,
    'persist.sys.usb.config': 'adb',
    'ro.adb.secure': '1',
    'ro.board.platform': spec.boardPlatform,
    'ro.boot.flash.locked': '1',
    'ro.boot.hardware': spec.hardware,
    'ro.boot.hardware.revision': 'MP1.0',
    'ro.boot.serialno': spec.serial,
    'ro.boot.verifiedbootstate': 'green',
    'ro.bootloader': 'unknown',
    'ro.build.characteristics': spec.formFactor === 'tablet' ? 'tablet,nosdcard' : 'nosdcard',
    'ro.build.date': buildDate,
    'ro.build.date.utc': String(spec.buildDateUtc),
    'ro.build.description': `${spec.product}-user ${spec.androidVersion} ${spec.buildId} ${spec.buildIncremental} release-keys`,
    'ro.build.display.id': spec.buildId,
    'ro.build.fingerprint': fingerprint,
    'ro.build.id': spec.buildId,
    'ro.build.tags': 'release-keys',
    'ro.build.type': 'user',
    'ro.build.user': 'android-build',
    'ro.build.version.codename': 'REL',
    'ro.build.version.incremental': spec.buildIncremental,
    'ro.build.version.release': spec.androidVersion,
    'ro.build.version.sdk': String(spec.sdk),
    'ro.build.version.security_patch': spec.securityPatch,
    'ro.crypto.state': 'encrypted',
    'ro.crypto.type': 'file',
    'ro.debuggable': '0',
    'ro.hardware': spec.hardware,
    'ro.hardware.egl': spec.cpu.egl,
    'ro.hardware.vulkan': spec.cpu.egl,
    'ro.oem_unlock_supported': '1',
    'ro.opengles.version': '196610',
    'ro.product.board': spec.device,
    'ro.product.brand': spec.brand,
    'ro.product.cpu.abi': spec.cpu.abis[0],
    'ro.product.cpu.abilist': spec.cpu.abis.join(','),
    'ro.product.cpu.abilist32': abis32.join(','),
    'ro.product.cpu.abilist64': abis64.join(','),
    'ro.product.device': spec.device,
    'ro.product.first_api_level': String(spec.firstApiLevel),
    'ro.product.locale': 'en-US',
    'ro.product.manufacturer': spec.manufacturer,
    'ro.product.model': spec.model,
    'ro.product.name': spec.product,
    'ro.revision': 'MP1.0',
    'ro.secure': '1',
    'ro.serialno': spec.serial,
    'ro.sf.lcd_density': String(spec.screen.density),
    'ro.treble.enabled': 'true',
    'ro.vendor.build.security_patch': spec.securityPatch,
    'sys.boot_completed': bootCompleted ? '1' : '',
    'sys.usb.config': 'adb',
    'sys.usb.state': 'adb',
    'wifi.interface': 'wlan0',
  };
  // ro.soc.* only exists since Android 12.
  if (spec.sdk >= 31) {
    props['ro.soc.manufacturer'] = spec.cpu.socManufacturer;
    props['ro.soc.model'] = spec.cpu.socModel;
  }
  if (spec.sdk >= 30) props['ro.build.version.release_or_codename'] = spec.androidVersion;
  if (spec.operator) props['gsm.version.baseband'] = `${spec.boardPlatform}-${spec.buildIncremental}`;
  return { ...props, ...(spec.extraProps ?? {}) };
}

/** `getprop` without arguments: `[key]: [value]` sorted by key. */
export function formatProps(props: Record<string, string>): string {
  return Object.keys(props)
    .sort()
    .map((k) => `[${k}]: [${props[k]}]\n`)
    .join('');
}
