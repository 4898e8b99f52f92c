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
import { Battery, InputEvent, Settings, WindowManager, inputCommand, screenshotPng } from './system-services';
import { formatProps } from './props';
import { renderGfxinfo } from './gfxinfo';
import { type Focus, deviceIdle, powerDump, windowDump } from './system-dumps';
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
  recordInput(e: InputEvent): void;
  /** App op modes set with `appops set` ("<package> <OP>" -> mode). */
  appOps: Map<string, string>;
  /** Packages on the Doze whitelist (`dumpsys deviceidle whitelist`). */
  idleWhitelist: Set<string>;
  /** The app that has the focus (the launcher on the home screen). */
  focus(): Focus;
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
    case 'screencap': {
      const { width, height } = ctx.wm.effectiveSize();
      const png = screenshotPng(width, height);
      const file = args.filter((a) => !a.startsWith('-')).pop();
      if (file) ctx.writeFile(file, png);
      else io.out(png);
      return 0;
    }
    case 'reboot':
      // The command never returns on a real device: the connection just dies.
      ctx.reboot(args[0] ?? '');
      await io.gone;
      return 0;
    case 'input':
      return inputCommand(args, io, ctx.recordInput);
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

/** `appops set|get <package> <op> [mode]`: modes are kept per package and op. */
function appops(ctx: ToolContext, args: string[], io: ToolIO): number {
  const words = args.filter((a, i) => a !== '--user' && args[i - 1] !== '--user' && a !== '--uid');
  const [verb, pkg, op, mode] = words;
  if ((verb === 'set' || verb === 'get') && pkg && !ctx.pm.get(pkg)) {
    io.err(`Error: Unknown package: ${pkg}\n`);
    return 255;
  }
  if (verb === 'set' && pkg && op && mode) {
    if (!['allow', 'deny', 'ignore', 'default', 'foreground'].includes(mode)) {
      io.err(`Error: Mode ${mode} is not valid\n`);
      return 255;
    }
    ctx.appOps.set(`${pkg} ${op.replace(/^android:/, '').toUpperCase()}`, mode);
    return 0;
  }
  if (verb === 'get' && pkg) {
    const ops = [...ctx.appOps].filter(([k]) => k.startsWith(`${pkg} `) && (!op || k.endsWith(` ${op.replace(/^android:/, '').toUpperCase()}`)));
    io.out(ops.length ? ops.map(([k, v]) => `${k.split(' ')[1]}: ${v}\n`).join('') : 'No operations.\n');
    return 0;
  }
  io.err('AppOps service (appops) commands:\n  set [--user <USER_ID>] <PACKAGE | UID> <OP> <MODE>\n  get [--user <USER_ID>] <PACKAGE | UID> [<OP>]\n');
  return 255;
}

/** `cmd notification allow_listener|disallow_listener <component>`: no output on success. */
function notification(ctx: ToolContext, args: string[], io: ToolIO): number {
  const [verb, component] = args;
  if ((verb === 'allow_listener' || verb === 'disallow_listener') && component) {
    if (!ctx.pm.get(component.split('/')[0])) {
      io.err(`Invalid listener - must be a ComponentName\n`);
      return 255;
    }
    return 0;
  }
  io.err(`Unknown command: ${verb ?? ''}\n`);
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
        `    User 0: ceDataInode=16842 installed=true hidden=false suspended=false stopped=${ctx.am.isRunning(p.packageName) ? 'false' : 'true'} enabled=0`,
        `      firstInstallTime=${local(p.firstInstallTimeMs)}`,
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
  if (service === 'window') {
    const all = windowDump(ctx.spec, ctx.wm.effectiveSize(), ctx.focus());
    // `dumpsys window <section>`: that section only.
    const section = rest[0] ? all.split('\n\n').filter((s) => s.includes(`(dumpsys window ${rest[0]})`) || (rest[0] === 'displays' && s.trimStart().startsWith('mCurrentFocus'))).join('\n\n') : all;
    io.out(section ? `${section}\n` : all);
    return 0;
  }
  if (service === 'power') {
    io.out(powerDump(ctx.uptimeMs()));
    return 0;
  }
  if (service === 'deviceidle') {
    const r = deviceIdle(rest, ctx.idleWhitelist, (pkg) => ctx.pm.get(pkg) !== undefined);
    io.out(r.out);
    return r.code;
  }
  if (!service) {
    io.out('Currently running services:\n  activity\n  battery\n  deviceidle\n  gfxinfo\n  package\n  power\n  settings\n  window\n');
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
