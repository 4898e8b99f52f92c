/** `apps upload|list`, `install`, `uninstall`, `launch`. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { ApiClient } from '../api-client';
import { action, durationOption, type Context } from '../context';
import { CliError, EXIT, type FailureCode } from '../errors';
import type { Application, Device } from '../models';
import { formatBytes, type Output, table } from '../output';
import { label } from '../retainer';
import { packageOs, uploadApplication } from '../upload';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ASYNC_DEADLINE = '20m';

/**
 * An application by Guid, display name or package/bundle id (the newest upload of it, said on stderr when there
 * are several), or a local .apk/.ipa file, which is uploaded first.
 */
export async function resolveApplication(api: ApiClient, out: Output, reference: string, deadlineMs: number): Promise<Application> {
  if (GUID.test(reference)) {
    // The record, for its operating system; an id the list does not show is left to the hub to judge.
    const [app] = await api.get<Application[]>('/Application', { params: { IdOrName: reference } });
    return app ?? { id: reference };
  }
  if (existsSync(reference)) return uploadApplication(api, out, reference, deadlineMs);
  const byName = await api.get<Application[]>('/Application', { params: { IdOrName: reference } });
  const byPackage = byName.length ? byName : await api.get<Application[]>('/Application', { params: { applicationIdentifier: reference } });
  const [newest, ...older] = byPackage.sort((a, b) => (b.versionCounter ?? 0) - (a.versionCounter ?? 0)
    || (b.createdDate ?? '').localeCompare(a.createdDate ?? ''));
  if (!newest) {
    throw new CliError(`No application '${reference}' on the hub (not a Guid, display name, package id or local file). `
      + '`devicelab apps list` shows what is there; `devicelab apps upload <file>` adds one.', EXIT.apiFailure);
  }
  if (older.some((app) => app.applicationIdentifier !== newest.applicationIdentifier)) {
    throw new CliError(`'${reference}' names ${byPackage.length} different applications (${byPackage.map(describeEntry).join('; ')}). `
      + 'Give the id of the one you mean.', EXIT.usage);
  }
  if (older.length) {
    out.note(`${byPackage.length} library entries match '${reference}'; using the newest, ${describeEntry(newest)}. `
      + `Give an id to use another (\`devicelab apps list --package ${newest.applicationIdentifier ?? reference}\`).`);
  }
  return newest;
}

function describeEntry(app: Application): string {
  const what = [app.applicationIdentifier, app.version, app.versionCounter === undefined ? undefined : `#${app.versionCounter}`,
    app.createdDate && `uploaded ${app.createdDate}`].filter(Boolean).join(' ');
  return `${app.id} (${what})`;
}

/**
 * Refuses an app built for another operating system than the device's before anything is sent: no install
 * option can make it fit.
 */
export function assertFits(app: Pick<Application, 'operatingSystem' | 'displayName' | 'id'>, device: Device): void {
  const os = device.operatingSystem;
  if (!app.operatingSystem || !os || os === 'Unknown' || app.operatingSystem === os) return;
  const build = os === 'iOS' ? 'an .ipa' : 'an .apk';
  throw new CliError(`'${app.displayName ?? app.id}' is an ${app.operatingSystem} app and ${label(device)} runs ${os}: it cannot be installed `
    + `there. Install ${build} of your app, or pick an ${app.operatingSystem} device (\`devicelab devices --filter os=${app.operatingSystem.toLowerCase()}\`).`,
  EXIT.apiFailure);
}

export async function installOnDevice(ctx: Context, app: Application, device: string, options: { force?: boolean; deadlineMs: number }): Promise<void> {
  await ctx.api().asyncOperation('/Application', {
    params: { action: 'install', id: app.id, deviceId: device, force: options.force || undefined },
    deadlineMs: options.deadlineMs,
    onPoll: (elapsed, percent) => ctx.out.progress(`installing ${app.displayName ?? app.id} on ${device}`
      + `${percent === undefined ? '' : `: ${percent}%`} (${Math.round(elapsed / 1000)} s)`),
    hint: installFailureHint,
  });
  ctx.out.clearProgress();
}

/** What to do after a failed install, by the failure's code. */
export function installFailureHint(code: FailureCode | undefined): string {
  switch (code) {
    case 'APP_NOT_PROVISIONED':
      return 'Upload a build whose provisioning profile lists this device\'s UDID, has not expired and allows its iOS '
        + 'version, or pick another device (`devicelab devices --filter os=ios`).';
    case 'APP_WRONG_PLATFORM':
      return 'Upload the build for that kind of device: a simulator build (zipped .app) for simulators, a device IPA for phones.';
    case 'DEVICE_IN_USE':
    case 'DEVICE_NOT_RETAINED':
      return 'Retain the device first (`devicelab retain <device>`), or pick a free one.';
    case 'INSTALL_FAILED_INSUFFICIENT_STORAGE':
      return 'The device is out of storage: uninstall apps from it (`devicelab uninstall <app> <device>`), or pick another device.';
    case 'INSTALL_FAILED_UPDATE_INCOMPATIBLE':
    case 'INSTALL_FAILED_VERSION_DOWNGRADE':
      return 'The device has another build of this app: install with --force (removes the old copy and its data).';
    case 'RECORD_FAILED':
      return 'The app is on the device, but the lab\'s record of it lagged: install again (same app, same device), or tell your lab admin if it repeats.';
    default:
      return 'If the device says the signature changed, install with --force (removes the old copy and its data).';
  }
}

function appRow(app: Application): (string | number | undefined)[] {
  return [app.id, app.displayName, app.applicationIdentifier, app.version, app.operatingSystem,
    app.fileByteCount === undefined ? undefined : formatBytes(app.fileByteCount), app.createdDate];
}

export function registerAppCommands(program: Command): void {
  const apps = program.command('apps').description('Applications stored on the hub.');
  apps.command('upload')
    .argument('<file>', '.apk or .ipa file')
    .description('Upload an application (streamed from disk, with a progress bar) and print its id.')
    .option('--timeout <duration>', 'how long the hub may take to check the package', ASYNC_DEADLINE)
    .addHelpText('after', '\nExamples:\n  devicelab apps upload build/app-release.apk\n  APP=$(devicelab apps upload app.ipa)')
    .action(action(async (ctx: Context, file: string, opts: { timeout: string }) => {
      const app = await uploadApplication(ctx.api(), ctx.out, file, durationOption(opts.timeout, '--timeout', 0));
      ctx.out.result(app, () => app.id);
      if (!ctx.out.json) ctx.out.note(`uploaded ${app.displayName ?? ''} ${app.applicationIdentifier ?? ''} ${app.version ?? ''} as ${app.id}`);
    }));
  apps.command('list')
    .description('List the applications on the hub.')
    .option('--name <text>', 'only this Guid or display name')
    .option('--package <id>', 'only this package name / bundle id')
    .addHelpText('after', '\nExamples:\n  devicelab apps list\n  devicelab apps list --package com.example.app --json')
    .action(action(async (ctx: Context, opts: { name?: string; package?: string }) => {
      const list = await ctx.api().get<Application[]>('/Application', { params: { IdOrName: opts.name, applicationIdentifier: opts.package } });
      ctx.out.result(list, () => (list.length
        ? table(['ID', 'NAME', 'PACKAGE', 'VERSION', 'OS', 'SIZE', 'UPLOADED'], list.map(appRow)) : 'No applications.\n'));
    }));

  program.command('install')
    .argument('<app>', 'application Guid, display name, package id, or a local .apk/.ipa (uploaded first)')
    .argument('<device>', 'device Guid, serial number or vendor id')
    .description('Install an application on a device and wait until it is installed.')
    .option('--force', 'remove an existing copy (and its data) first, e.g. when the signing certificate changed')
    .option('--timeout <duration>', 'how long to wait for the install', ASYNC_DEADLINE)
    .addHelpText('after', '\nExamples:\n  devicelab install app-debug.apk 8ABX0001\n  devicelab install com.example.app 8ABX0001 --force')
    .action(action(async (ctx: Context, appRef: string, device: string, opts: { force?: boolean; timeout: string }) => {
      const deadlineMs = durationOption(opts.timeout, '--timeout', 0);
      const [target] = await ctx.api().get<Device[]>('/Device', { params: { AnyId: device } });
      // A local file is checked before its upload (the hub says what is wrong with an unknown device).
      if (target && existsSync(appRef)) assertFits({ id: appRef, displayName: path.basename(appRef), operatingSystem: packageOs(appRef) }, target);
      const app = await resolveApplication(ctx.api(), ctx.out, appRef, deadlineMs);
      if (target) assertFits(app, target);
      await installOnDevice(ctx, app, device, { force: opts.force, deadlineMs });
      ctx.out.result({ installed: app.id, device }, () => '');
      if (!ctx.out.json) ctx.out.note(`installed ${app.displayName ?? app.id} on ${device}`);
    }));

  program.command('uninstall')
    .argument('<app>', 'application Guid, display name, or package id / bundle id (also apps the hub did not install)')
    .argument('<device>', 'device Guid, serial number or vendor id')
    .description('Remove an application from a device.')
    .option('--keep-data', 'keep the application\'s data')
    .addHelpText('after', '\nExamples:\n  devicelab uninstall com.example.app 8ABX0001\n  devicelab uninstall 3f0c2a9e-... 8ABX0001 --keep-data')
    .action(action(async (ctx: Context, appRef: string, device: string, opts: { keepData?: boolean }) => {
      const removedata = opts.keepData ? false : undefined;
      const hint = 'Check that the app is installed (`devicelab devices --filter app=<package>`) and that you hold the device.';
      if (GUID.test(appRef)) {
        await ctx.api().result('POST', '/Application', { params: { action: 'uninstall', id: appRef, deviceId: device, removedata }, hint });
      } else {
        const [known] = await ctx.api().get<Application[]>('/Application', { params: { IdOrName: appRef } });
        const bundleId = known?.applicationIdentifier ?? appRef;
        await ctx.api().result('POST', '/Application', { params: { action: 'uninstallBundle', bundleId, deviceId: device, removedata }, hint });
      }
      ctx.out.result({ uninstalled: appRef, device }, () => '');
      if (!ctx.out.json) ctx.out.note(`uninstalled ${appRef} from ${device}`);
    }));

  program.command('launch')
    .argument('<app>', 'application Guid, display name or package id')
    .argument('<device>', 'device Guid, serial number or vendor id')
    .description('Start an application on a device.')
    .option('--args <arguments>', 'arguments for the activity start (Android) or the program (iOS)')
    .option('--timeout <duration>', 'how long to wait for the launch', '5m')
    .addHelpText('after', '\nExamples:\n  devicelab launch com.example.app 8ABX0001\n  devicelab launch com.example.app 8ABX0001 --args "--es mode demo"')
    .action(action(async (ctx: Context, appRef: string, device: string, opts: { args?: string; timeout: string }) => {
      const deadlineMs = durationOption(opts.timeout, '--timeout', 0);
      const app = await resolveApplication(ctx.api(), ctx.out, appRef, deadlineMs);
      await ctx.api().asyncOperation('/Application', {
        params: { action: 'launch', id: app.id, deviceId: device, arguments: opts.args }, deadlineMs,
        hint: 'Install it first (`devicelab install <app> <device>`), and retain the device.',
      });
      ctx.out.result({ launched: app.id, device }, () => '');
      if (!ctx.out.json) ctx.out.note(`launched ${app.displayName ?? app.id} on ${device}`);
    }));
}
