/**
 * Implementations of the Android command-line tools the fake tool scripts
 * forward to (getprop, pm, cmd, am, monkey, dumpsys, logcat, settings, wm,
 * screencap, reboot, input, setprop).
 */
import * as fs from 'node:fs';
import type { ToolIO } from './tool-io';
import type { PackageManager } from './packages';
import type { ActivityManager } from './activity';
import type { LogBuffer } from './logcat';
import { Battery, InputEvent, Settings, WindowManager } from './system-services';
import type { DeviceScreen } from './screen';
import { inputTool } from './screen/input-tool';
import { dumpsysPower, screencap, windowFocusLines } from './screen/screen-tools';
import { dumpsysInput } from './screen/input-dump';
import { formatProps } from './props';
import { renderGfxinfo } from './gfxinfo';
import { deviceIdle } from './device-idle';
import { appops, notification } from './app-ops-tools';
import type { AndroidDeviceSpec } from './spec';

export const TOOL_NAMES = ['getprop', 'setprop', 'pm', 'cmd', 'am', 'monkey', 'dumpsys', 'logcat', 'settings', 'wm', 'screencap', 'reboot', 'input', 'ime', 'appops'] as const;

export interface ToolContext {
  spec: AndroidDeviceSpec;
  props(): Record<string, string>;
  setProp(key: string, value: string): void;
  pm: PackageManager;
  am: ActivityManager;
  logcat: LogBuffer;
  battery: Battery;
  settings: Settings;
  wm: WindowManager;
  screen: DeviceScreen;
  recordInput(e: InputEvent): void;
  /** App op modes set with `appops set` ("<package> <OP>" -> mode). */
  appOps: Map<string, string>;
  /** Packages on the Doze whitelist (`dumpsys deviceidle whitelist`). */
  idleWhitelist: Set<string>;
  /** Host file for a device path, or null if it does not exist. */
  readFile(devicePath: string): Buffer | null;
  writeFile(devicePath: string, data: Buffer): void;
  reboot(target: string): void;
  /** Milliseconds since the device booted (dumpsys headers). */
  uptimeMs(): number;
}

export async function runTool(ctx: ToolContext, tool: string, args: string[], io: ToolIO): Promise<number> {
  switch (tool) {
    case 'getprop':
      return getprop(ctx, args, io);
    case 'setprop':
      if (args.length !== 2 || args[0].startsWith('ro.')) {
        io.err(`Failed to set property '${args[0] ?? ''}' to '${args[1] ?? ''}'.\nSee dmesg for error reason.\n`);
        return 1;
      }
      ctx.setProp(args[0], args[1]);
      return 0;
    case 'pm':
      return ctx.pm.command(args, io, ctx.readFile);
    case 'cmd':
      return cmd(ctx, args, io);
    case 'am':
      return ctx.am.am(args, io);
    case 'monkey':
      return ctx.am.monkey(args, io);
    case 'dumpsys':
      return dumpsys(ctx, args, io);
    case 'logcat':
      return logcat(ctx, args, io);
    case 'settings':
      return ctx.settings.command(args, io);
    case 'wm':
      return ctx.wm.command(args, io);
    case 'screencap':
      return screencap(ctx.screen, ctx.spec.sdk, args, io, ctx.writeFile);
    case 'reboot':
      // The command never returns on a real device: the connection just dies.
      ctx.reboot(args[0] ?? '');
      await io.gone;
      return 0;
    case 'input':
      return inputTool({
        screen: ctx.screen,
        inputMethod: () => ctx.settings.get('secure', 'default_input_method') ?? '',
        record: (a) => ctx.recordInput({ timeMs: Date.now(), args: [...a] }),
      }, args, io);
    case 'ime':
      return ime(ctx, args, io);
    case 'appops':
      return appops(ctx, args, io);
    default:
      io.err(`/system/bin/sh: ${tool}: inaccessible or not found\n`);
      return 127;
  }
}

/** `ime list [-s] [-a]`, `ime enable|disable|set <id>`: the keyboards the device knows, the selected one in settings. */
function ime(ctx: ToolContext, args: string[], io: ToolIO): number {
  const [sub, ...rest] = args;
  const id = rest.filter((a) => !a.startsWith('-')).pop() ?? '';
  const current = ctx.settings.get('secure', 'default_input_method') ?? '';
  const enabled = (ctx.settings.get('secure', 'enabled_input_methods') ?? current).split(':').filter(Boolean);
  const known = (ime: string) => ime === current || ctx.pm.get(ime.split('/')[0]) !== undefined;
  if (sub === 'list') {
    const shown = rest.includes('-a') ? [...new Set([current, ...enabled])] : enabled;
    io.out(shown.map((i) => (rest.includes('-s') ? `${i}\n` : `${i}:\n  mId=${i} mSettingsActivity=null mIsVrOnly=false\n`)).join(''));
    return 0;
  }
  if ((sub === 'enable' || sub === 'disable' || sub === 'set') && id) {
    if (!known(id)) {
      io.err(`Unknown input method ${id} cannot be ${sub === 'set' ? 'selected' : `${sub}d`} for user #0\n`);
      return 255;
    }
    if (sub === 'set') {
      ctx.settings.set('secure', 'default_input_method', id);
      io.out(`Input method ${id} selected for user #0\n`);
    } else {
      const next = sub === 'enable' ? [...new Set([...enabled, id])] : enabled.filter((i) => i !== id);
      ctx.settings.set('secure', 'enabled_input_methods', next.join(':'));
      io.out(`Input method ${id}: ${sub === 'enable' ? (enabled.includes(id) ? 'already enabled' : 'now enabled') : 'now disabled'} for user #0\n`);
    }
    return 0;
  }
  io.err('ime <command>:\n  list [-a] [-s]\n  enable [--user <USER_ID>] <ID>\n  disable [--user <USER_ID>] <ID>\n  set [--user <USER_ID>] <ID>\n');
  return 255;
}

function getprop(ctx: ToolContext, args: string[], io: ToolIO): number {
  const props = ctx.props();
  if (args.length === 0) io.out(formatProps(props));
  else io.out(`${props[args[0]] ?? args[1] ?? ''}\n`);
  return 0;
}

async function cmd(ctx: ToolContext, args: string[], io: ToolIO): Promise<number> {
  const [service, ...rest] = args;
  if (service === 'package') return ctx.pm.command(rest, io, ctx.readFile);
  if (service === 'activity') return ctx.am.am(rest, io);
  if (service === 'settings') return ctx.settings.command(rest, io);
  if (service === 'window') return ctx.wm.command(rest, io);
  if (service === 'appops') return appops(ctx, rest, io);
  if (service === 'notification') return notification(ctx, rest, io);
  if (service === '-l') {
    io.out(['activity', 'appops', 'battery', 'notification', 'package', 'settings', 'window'].join('\n') + '\n');
    return 0;
  }
  io.err(`cmd: Can't find service: ${service ?? ''}\n`);
  return 20;
}

function dumpsys(ctx: ToolContext, args: string[], io: ToolIO): number {
  const [service, ...rest] = args;
  if (service === 'battery') {
    io.out(ctx.battery.dumpsys(ctx.spec.sdk));
    return 0;
  }
  if (service === 'package' && rest[0]) {
    const p = ctx.pm.get(rest[0]);
    if (!p) {
      io.out(`Unable to find package: ${rest[0]}\n`);
      return 0;
    }
    const local = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
    const codeDir = p.codePath.slice(0, p.codePath.lastIndexOf('/'));
    io.out(
      [
        'Packages:',
        `  Package [${p.packageName}] (3f9a2c1):`,
        `    userId=${p.uid}`,
        `    pkg=Package{a81e4b7 ${p.packageName}}`,
        `    codePath=${codeDir}`,
        `    resourcePath=${codeDir}`,
        `    primaryCpuAbi=${ctx.spec.cpu.abis[0]}`,
        `    versionCode=${p.versionCode} minSdk=1 targetSdk=${ctx.spec.sdk}`,
        `    versionName=${p.versionName ?? 'null'}`,
        `    timeStamp=${local(p.lastUpdateTimeMs)}`,
        `    lastUpdateTime=${local(p.lastUpdateTimeMs)}`,
        `    installerPackageName=${p.system ? 'null' : 'com.android.shell'}`,
        ...(p.requestedPermissions?.length ? ['    requested permissions:', ...p.requestedPermissions.map((name) => `      ${name}`)] : []),
        `    User 0: ceDataInode=16842 installed=true hidden=false suspended=false stopped=${ctx.am.isRunning(p.packageName) ? 'false' : 'true'} enabled=0`,
        `      firstInstallTime=${local(p.firstInstallTimeMs)}`,
        ...(Object.keys(p.runtimePermissions ?? {}).length ? ['      runtime permissions:',
          ...Object.entries(p.runtimePermissions ?? {}).map(([name, granted]) => `        ${name}: granted=${granted}, flags=[ USER_SENSITIVE_WHEN_GRANTED|USER_SENSITIVE_WHEN_DENIED]`)] : []),
      ].join('\n') + '\n',
    );
    return 0;
  }
  if (service === 'gfxinfo') {
    const [packageName, option] = rest;
    const process = packageName ? ctx.am.process(packageName) : undefined;
    // `reset` zeroes the counters: the stats restart now.
    if (process && option === 'reset') process.startMs = Date.now();
    io.out(renderGfxinfo({
      sdk: ctx.spec.sdk, packageName: packageName ?? '', process, uptimeMs: ctx.uptimeMs(),
      activity: packageName ? ctx.pm.get(packageName)?.launcherActivity ?? undefined : undefined,
    }));
    return 0;
  }
  if (service === 'activity' && rest[0] === 'services') {
    io.out(ctx.am.dumpsysServices(rest[1]));
    return 0;
  }
  if (service === 'window' && (rest[0] === undefined || rest[0] === 'displays' || rest[0] === 'windows')) {
    const size = ctx.wm.effectiveSize();
    const [width, height] = ctx.screen.rotation % 2 === 1 ? [size.height, size.width] : [size.width, size.height];
    const focus = windowFocusLines({ screen: ctx.screen, launcherPackage: ctx.screen.launcherPackage, activityOf: (p) => ctx.pm.get(p)?.launcherActivity ?? null });
    if (rest[0] === 'windows') io.out(`WINDOW MANAGER WINDOWS (dumpsys window windows)\n${focus}`);
    else io.out(`WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n  Display: mDisplayId=0\n    init=${ctx.spec.screen.width}x${ctx.spec.screen.height} ${ctx.spec.screen.density}dpi cur=${width}x${height}\n${focus}`);
    return 0;
  }
  if (service === 'input') {
    io.out(dumpsysInput(ctx.screen, ctx.spec.sdk));
    return 0;
  }
  if (service === 'power') {
    io.out(dumpsysPower(ctx.screen));
    return 0;
  }
  if (service === 'deviceidle') {
    const r = deviceIdle(rest, ctx.idleWhitelist, (pkg) => ctx.pm.get(pkg) !== undefined);
    io.out(r.out);
    return r.code;
  }
  if (!service) {
    io.out('Currently running services:\n  activity\n  battery\n  deviceidle\n  gfxinfo\n  input\n  package\n  power\n  settings\n  window\n');
    return 0;
  }
  io.err(`Can't find service: ${service}\n`);
  return 0;
}

async function logcat(ctx: ToolContext, args: string[], io: ToolIO): Promise<number> {
  if (args.includes('-c')) {
    ctx.logcat.clear();
    return 0;
  }
  // -t N: the last N lines, then exit. -T N: the last N lines, then keep following (does not imply -d).
  const count = (flag: string) => {
    const i = args.indexOf(flag);
    return i >= 0 && /^\d+$/.test(args[i + 1] ?? '') ? Number(args[i + 1]) : undefined;
  };
  const tail = count('-t');
  const dumpOnly = args.includes('-d') || tail !== undefined;
  io.out(ctx.logcat.dump(tail ?? count('-T')));
  if (dumpOnly) return 0;
  // Follow mode: each new line goes out as the device logs it, until the reader goes away. The poll makes
  // the ambient chatter (generated lazily for elapsed time) appear while nothing else logs.
  let position = ctx.logcat.end;
  let stop = false;
  let wake: (() => void) | undefined;
  const unfollow = ctx.logcat.follow(() => wake?.());
  void io.gone.then(() => {
    stop = true;
    wake?.();
  });
  try {
    while (!stop) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, 500);
      });
      clearTimeout(timer);
      wake = undefined;
      const { lines, next } = ctx.logcat.since(position);
      position = next;
      if (lines.length && !stop) io.out(lines.join('\n') + '\n');
    }
  } finally {
    unfollow();
  }
  return 0;
}

/** Reads a host file or returns null. */
export function readHostFile(hostPath: string): Buffer | null {
  try {
    return fs.readFileSync(hostPath);
  } catch {
    return null;
  }
}
