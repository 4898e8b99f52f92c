import { parseAmStart } from '../../src/drivers/android/parsers/am-start';
import { parseBattery } from '../../src/drivers/android/parsers/battery';
import { parseDf } from '../../src/drivers/android/parsers/df';
import { parseDumpsysPackageVersion } from '../../src/drivers/android/parsers/dumpsys-package';
import { parseGetprop, propertyMap } from '../../src/drivers/android/parsers/getprop';
import { parsePackageList } from '../../src/drivers/android/parsers/packages';
import { parsePmResult } from '../../src/drivers/android/parsers/pm-result';
import { parseResolvedActivity } from '../../src/drivers/android/parsers/resolve-activity';
import { parseSingleValue } from '../../src/drivers/android/parsers/settings';
import { batchScript, lines, splitSections } from '../../src/drivers/android/parsers/text';
import { parseWmDensity, parseWmSize, smallestWidthDp } from '../../src/drivers/android/parsers/wm';
import { shellQuote } from '@devicelab/shared';
import * as S from './samples';

const withoutPrompt = (text: string) => text.split('\n').filter((l) => !l.startsWith('$ ')).join('\n');
const crlf = (text: string) => text.replace(/\n/g, '\r\n');

describe('getprop', () => {
  it('parses the Pixel 7 sample in order, including empty values', () => {
    const props = parseGetprop(S.GETPROP_PIXEL7);
    expect(props).toHaveLength(S.GETPROP_PIXEL7.trim().split('\n').length);
    expect(props[0]).toEqual({ name: 'dalvik.vm.heapgrowthlimit', value: '256m' });
    const map = propertyMap(props);
    expect(map.get('ro.product.model')).toBe('Pixel 7');
    expect(map.get('ro.build.date')).toBe('Thu Dec 14 18:32:15 UTC 2023');
    expect(map.get('ro.product.cpu.abilist32')).toBe('');
    expect(map.get('sys.boot_completed')).toBe('1');
  });

  it('strips \\r and joins continuation lines into the previous value', () => {
    const text = crlf('[a.b]: [one]\n[vendor.multi]: [line one\nline two]\n[z]: [last]\n');
    expect(parseGetprop(text)).toEqual([
      { name: 'a.b', value: 'one' },
      { name: 'vendor.multi', value: 'line one\nline two' },
      { name: 'z', value: 'last' },
    ]);
  });

  it('keeps brackets inside values', () => {
    expect(parseGetprop('[x]: [[a] b]\n')).toEqual([{ name: 'x', value: '[a] b' }]);
  });
});

describe('dumpsys battery', () => {
  it('reads level and the BatteryManager status code', () => {
    expect(parseBattery(S.DUMPSYS_BATTERY)).toEqual({ percent: 22, status: 'Charging' });
  });
  it('maps every status code and scales the level', () => {
    const make = (status: number, level = 50, scale = 200) => `Current Battery Service state:\n  status: ${status}\n  level: ${level}\n  scale: ${scale}\n`;
    expect(parseBattery(make(3))).toEqual({ percent: 25, status: 'Discharging' });
    expect(parseBattery(make(4)).status).toBe('NotCharging');
    expect(parseBattery(make(5)).status).toBe('Full');
    expect(parseBattery(make(1)).status).toBe('Unknown');
    expect(parseBattery('')).toEqual({ percent: -1, status: 'Unknown' });
  });
});

describe('df /data', () => {
  it('computes size and perceived used space in bytes', () => {
    expect(parseDf(S.DF_DATA)).toEqual({ diskSpace: 115091928 * 1024, diskSpaceUsed: (115091928 - 51068440) * 1024 });
  });
  it('returns undefined for toolbox human units or errors', () => {
    expect(parseDf('df: /data: No such file or directory')).toBeUndefined();
  });
});

describe('wm', () => {
  it('prefers the override size and computes the smallest width', () => {
    expect(parseWmSize('Physical size: 1080x2400\nOverride size: 720x1600\n')).toEqual({ width: 720, height: 1600 });
    expect(parseWmSize(crlf('Physical size: 1080x2400\n'))).toEqual({ width: 1080, height: 2400 });
    expect(parseWmDensity('Physical density: 420\n')).toBe(420);
    expect(smallestWidthDp({ width: 1080, height: 2400 }, 420)).toBeCloseTo(411.4, 1);
    expect(smallestWidthDp({ width: 1600, height: 2560 }, 320)).toBe(800);
  });
});

describe('single values', () => {
  it('treats the literal null and error texts as unset', () => {
    expect(parseSingleValue('Pixel 7\n')).toBe('Pixel 7');
    expect(parseSingleValue('null\n')).toBeUndefined();
    expect(parseSingleValue('cat: /sys/class/net/wlan0/address: No such file or directory\n')).toBeUndefined();
    expect(parseSingleValue('f4:60:e2:3c:91:7a\r\n')).toBe('f4:60:e2:3c:91:7a');
  });
});

describe('pm list packages', () => {
  it('splits on the last = before the package (paths contain =)', () => {
    expect(parsePackageList(S.PM_LIST_THIRD)).toEqual([
      {
        packageId: 'com.example.shop',
        path: '/data/app/~~Hh3kT2Xq0yJtN8k1dW4Zgw==/com.example.shop-7bLq9ZkX2m0wA5cR1sYt3g==/base.apk',
        versionCode: '10402',
      },
      {
        packageId: 'org.mozilla.firefox',
        path: '/data/app/~~0aPq8YbV6m3kR2Lx5Tf9Jw==/org.mozilla.firefox-3NvY2s8cQ1pL0eZ7hJk4bA==/base.apk',
        versionCode: '2016003655',
      },
    ]);
  });
  it('handles old path formats, uid suffixes, no -f and \\r', () => {
    const text = crlf('package:/data/app/com.a-1/base.apk=com.a versionCode:3 uid:10100\npackage:com.b\n');
    expect(parsePackageList(text)).toEqual([
      { packageId: 'com.a', path: '/data/app/com.a-1/base.apk', versionCode: '3' },
      { packageId: 'com.b', path: '' },
    ]);
  });
});

describe('dumpsys package', () => {
  it('reads versionName and versionCode of the first block', () => {
    expect(parseDumpsysPackageVersion(S.DUMPSYS_PACKAGE)).toEqual({ versionName: '1.4.2', versionCode: '10402' });
    const hidden = 'Packages:\n  Package [x] (1):\n    versionCode=2 minSdk=1\n    versionName=2.0\nHidden system packages:\n  Package [x] (2):\n    versionName=1.0\n';
    expect(parseDumpsysPackageVersion(hidden)).toEqual({ versionName: '2.0', versionCode: '2' });
    expect(parseDumpsysPackageVersion('Unable to find package: x')).toEqual({});
    // No android:versionName in the manifest (ApiDemos): Android prints the null.
    expect(parseDumpsysPackageVersion('Packages:\n  Package [x] (1):\n    versionCode=0 minSdk=1\n    versionName=null\n')).toEqual({ versionCode: '0' });
  });
});

describe('resolve-activity', () => {
  it('takes the last non-empty line with a slash', () => {
    expect(parseResolvedActivity(withoutPrompt(S.RESOLVE_ACTIVITY))).toBe('com.example.shop/.ui.MainActivity');
    expect(parseResolvedActivity('No activity found\n')).toBeUndefined();
    expect(parseResolvedActivity('')).toBeUndefined();
  });
});

describe('am start', () => {
  it('reads a successful -W launch', () => {
    expect(parseAmStart(S.AM_START_OK)).toEqual({ ok: true, status: 'ok', launchState: 'COLD', totalTimeMs: 612 });
  });
  it('surfaces the Error: line', () => {
    expect(parseAmStart(crlf(S.AM_START_ERROR))).toMatchObject({
      ok: false, error: 'Activity class {com.example.shop/com.example.shop.Nope} does not exist.',
    });
  });
  it('accepts the brought-to-front warning', () => {
    const text = 'Starting: Intent { cmp=a/.B }\nWarning: Activity not started, its current task has been brought to the front\nStatus: ok\nLaunchState: HOT\nComplete\n';
    expect(parseAmStart(text)).toMatchObject({ ok: true, launchState: 'HOT' });
  });
});

describe('pm install / uninstall results', () => {
  const [streamed, legacy, failed] = S.INSTALL_OUTPUTS.split('\n\n').map(withoutPrompt);
  it('success only on a line exactly Success', () => {
    expect(parsePmResult(streamed)).toEqual({ ok: true });
    expect(parsePmResult(crlf(legacy))).toEqual({ ok: true });
    expect(parsePmResult('Success: streamed 100 bytes\nFailure [INSTALL_FAILED_INVALID_APK: bad]\n')).toEqual({
      ok: false, code: 'INSTALL_FAILED_INVALID_APK', message: 'Failure [INSTALL_FAILED_INVALID_APK: bad]',
    });
    expect(parsePmResult('Success: streamed 100 bytes\n').ok).toBe(false);
  });
  it('returns the Failure text and code', () => {
    expect(parsePmResult(failed)).toEqual({
      ok: false,
      code: 'INSTALL_FAILED_UPDATE_INCOMPATIBLE',
      message: 'Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Existing package com.example.shop signatures do not match newer version; ignoring!]',
    });
    expect(parsePmResult('Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE]')).toMatchObject({ code: 'INSTALL_FAILED_INSUFFICIENT_STORAGE' });
    // pm's reasons that are not codes fail as PM_REFUSED, never as a code of their own.
    expect(parsePmResult('Failure [not installed for 0]')).toEqual({ ok: false, message: 'Failure [not installed for 0]', code: 'PM_REFUSED' });
    expect(parsePmResult('')).toMatchObject({ ok: false, code: 'PM_REFUSED' });
  });
});

describe('batching and quoting', () => {
  it('round-trips sections through markers', () => {
    const script = batchScript({ a: 'getprop', b: 'df /data' });
    expect(script).toBe('echo @@a; getprop; echo @@b; df /data');
    const sections = splitSections(crlf('junk\n@@a\n[x]: [1]\n@@b\nline\n@@pkg:com.x\n'));
    expect([...sections.entries()]).toEqual([['a', '[x]: [1]'], ['b', 'line'], ['pkg:com.x', '']]);
  });
  it('single-quotes for sh', () => {
    expect(shellQuote("a'b; rm -rf /")).toBe("'a'\\''b; rm -rf /'");
    expect(lines('a\r\nb\r\n')).toEqual(['a', 'b']);
  });
});
