/**
 * `run`: upload the apps to install, retain devices, install the apps, open adb tunnels, run a command with the
 * devices in its environment, and release the devices on every way out: the command's end, a failure of any
 * step, SIGINT, SIGTERM and SIGHUP (passed to the command's whole process group; a second one kills it) and the
 * end of the process that started devicelab. Exits with the command's code (128 + signal when a signal ended it;
 * 124 when --timeout ended it).
 */
import type { Command } from 'commander';
import { adbConnect, adbDisconnect, registerAdbKey } from '../adb';
import { childEnvironment } from '../config';
import { action, durationOption, positiveInt, type Context } from '../context';
import { FILTER_KEYS, filterText } from '../device-filter';
import { CliError, EXIT, usageError } from '../errors';
import type { Application } from '../models';
import { CommandGroup, KILL_GRACE_MS } from '../process-group';
import { interrupted, label, Retainer } from '../retainer';
import { onStopSignals, signalExitCode, type StopSignal } from '../stop-signals';
import { openTunnel, probeTunnel, userTunnel, type Tunnel } from '../tunnel';
import { assertFits, installOnDevice, resolveApplication } from './apps';
import { collect } from './devices';

interface RunOptions {
  filter?: string[];
  device?: string[];
  count: string;
  wait: string;
  install?: string[];
  force?: boolean;
  adb: boolean;
  timeout?: string;
}

const INSTALL_DEADLINE_MS = 20 * 60_000;

export function registerRunCommand(program: Command): void {
  program.command('run')
    .argument('<command...>', 'the command to run (after --); a single argument runs through the shell')
    .description('Retain devices, install apps, run a command with the devices in its environment, always release them.')
    .option('-f, --filter <filter>', `which devices (repeatable): ${FILTER_KEYS}`, collect)
    .option('-d, --device <device>', 'a device by Guid, serial or vendor id (repeatable; instead of --filter)', collect)
    .option('-n, --count <n>', 'how many matching devices', '1')
    .option('-w, --wait <duration>', 'wait this long for enough devices to be free', '0')
    .option('-i, --install <app>', 'install this .apk/.ipa file or hub application first (repeatable)', collect)
    .option('--force', 'install with --force (remove an existing copy and its data first)')
    .option('--no-adb', 'do not open adb tunnels (no ANDROID_SERIAL)')
    .option('--timeout <duration>', 'stop the command after this long (exit 124)')
    .addHelpText('after', `
The command gets DEVICELAB_DEVICE_IDS (comma-separated Guids), DEVICELAB_DEVICE_SERIALS, DEVICELAB_URL and,
for Android devices (unless --no-adb), ANDROID_SERIAL (the first) and DEVICELAB_ADB_SERIALS: adb addresses of
tunnels through the hub, already \`adb connect\`ed.

Examples:
  devicelab run --filter os=android,minOs=13 --wait 10m --install app-debug.apk -- ./gradlew connectedCheck
  devicelab run --filter os=android --count 2 -- 'adb -s $ANDROID_SERIAL shell getprop ro.product.model'
  devicelab run --device 8ABX0001 --no-adb -- ./my-tests.sh`)
    .action(action(async (ctx: Context, command: string[], opts: RunOptions) => runCommand(ctx, command, opts)));
}

async function runCommand(ctx: Context, command: string[], opts: RunOptions): Promise<number> {
  if (opts.device && opts.filter) throw usageError('Give --device or --filter, not both.');
  const request = {
    devices: opts.device, filter: filterText(opts.filter),
    count: positiveInt(opts.count, '--count', 1), waitMs: durationOption(opts.wait, '--wait', 0),
  };
  const timeoutMs = opts.timeout ? durationOption(opts.timeout, '--timeout', 0) : undefined;
  const api = ctx.api();

  let group: CommandGroup | undefined;
  let signalsSeen = 0;
  const controller = new AbortController();
  const stopListening = onStopSignals((signal: StopSignal) => {
    signalsSeen += 1;
    if (!controller.signal.aborted) controller.abort(signal);
    if (group?.alive()) {
      ctx.out.note(signalsSeen > 1 ? 'killing the command' : `passing ${signal} to the command; the devices are released when it ends`);
      group.signal(signalsSeen > 1 ? 'SIGKILL' : signal);
    } else {
      ctx.out.note(`${signal}: stopping and releasing the devices`);
    }
  });
  const checkInterrupted = () => {
    if (controller.signal.aborted) throw interrupted(controller.signal);
  };

  const retainer = new Retainer(api, ctx.out, controller.signal);
  const tunnels: Tunnel[] = [];
  const adbConnected: string[] = [];
  try {
    // Uploads first: a long upload, or a file the hub refuses, keeps no device from anyone.
    const apps: Application[] = [];
    for (const reference of opts.install ?? []) {
      apps.push(await resolveApplication(api, ctx.out, reference, INSTALL_DEADLINE_MS));
      checkInterrupted();
    }

    const retained = await retainer.retain(request);
    checkInterrupted();
    for (const { device } of retained) ctx.out.note(`retained ${label(device)}`);

    for (const app of apps) {
      for (const { device } of retained) assertFits(app, device);
      await Promise.all(retained.map(({ device }) => installOnDevice(ctx, app, device.id, { force: opts.force, deadlineMs: INSTALL_DEADLINE_MS })));
      ctx.out.note(`installed ${app.displayName ?? app.id} on ${retained.length} device(s)`);
      checkInterrupted();
    }

    const adbSerials: string[] = [];
    const android = retained.filter((r) => r.device.operatingSystem === 'Android');
    if (opts.adb && android.length) {
      await registerAdbKey(api); // the devices' adb endpoints let in only their retainer's keys
      for (const { device } of android) {
        await probeTunnel(userTunnel(api, device.id));
        const tunnel = await openTunnel(userTunnel(api, device.id), ctx.out);
        tunnels.push(tunnel);
        adbConnected.push(tunnel.address); // disconnected at the end even when the connect fails half way
        await adbConnect(tunnel.address);
        adbSerials.push(tunnel.address);
        checkInterrupted();
      }
    }

    const env: Record<string, string> = {
      DEVICELAB_DEVICE_IDS: retained.map((r) => r.device.id).join(','),
      DEVICELAB_DEVICE_SERIALS: retained.map((r) => r.device.serialNumber ?? r.ticket.serialNumber).join(','),
      DEVICELAB_URL: api.credentials.url,
    };
    if (adbSerials.length) {
      env.ANDROID_SERIAL = adbSerials[0];
      env.DEVICELAB_ADB_SERIALS = adbSerials.join(',');
    }
    checkInterrupted();
    group = new CommandGroup(command, { stdio: 'inherit', env: childEnvironment(env), shell: command.length === 1 });
    return await waitForCommand(group, ctx, command, timeoutMs);
  } finally {
    for (const address of adbConnected) await adbDisconnect(address);
    await Promise.all(tunnels.map((tunnel) => tunnel.close()));
    const held = retainer.retained.map((r) => label(r.device));
    await retainer.releaseAll();
    if (held.length) ctx.out.note(`released ${held.join(', ')}`);
    stopListening();
  }
}

/**
 * Resolves with the command's exit code once it and everything it left in its process group ended (what is left
 * when the command itself exits gets SIGTERM, then SIGKILL).
 */
export function waitForCommand(group: CommandGroup, ctx: Context, command: string[], timeoutMs?: number): Promise<number> {
  const { child } = group;
  return new Promise((resolve, reject) => {
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        timedOut = true;
        ctx.out.error(`the command ran longer than --timeout; stopping it (SIGTERM, then SIGKILL after ${KILL_GRACE_MS / 1000} s)`);
        group.signal('SIGTERM');
        killTimer = setTimeout(() => group.signal('SIGKILL'), KILL_GRACE_MS);
      }, timeoutMs);
    }
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new CliError(err.code === 'ENOENT' ? `Command not found: ${command[0]}. Check its name and PATH.`
        : `Could not start ${command[0]}: ${err.message}`, err.code === 'ENOENT' ? 127 : EXIT.apiFailure));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const exitCode = timedOut ? EXIT.timeout : signal ? signalExitCode(signal) : code ?? EXIT.apiFailure;
      void group.end().then(() => {
        clearTimeout(killTimer);
        resolve(exitCode);
      });
    });
  });
}
