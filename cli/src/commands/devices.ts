/** `devices`, `retain`, `release`. */
import type { Command } from 'commander';
import { action, durationOption, positiveInt, type Context } from '../context';
import { FILTER_KEYS, filterText } from '../device-filter';
import { usageError } from '../errors';
import type { Device } from '../models';
import { table } from '../output';
import { interrupted, label, Retainer } from '../retainer';
import { onStopSignals } from '../stop-signals';

export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function deviceRow(device: Device): (string | number | undefined)[] {
  const retained = device.retainedById ? device.retainedByUserName ?? device.retainedByDisplayName ?? 'yes' : undefined;
  return [device.id, device.name, device.friendlyModel || device.model,
    `${device.operatingSystem ?? ''} ${device.operatingSystemVersion ?? ''}`.trim(), device.serialNumber,
    device.enabled === false ? 'Disabled' : device.availability, retained,
    device.batteryPercentCharged === undefined ? undefined : `${device.batteryPercentCharged}%`];
}

export const DEVICE_HEADERS = ['ID', 'NAME', 'MODEL', 'OS', 'SERIAL', 'STATE', 'RETAINED BY', 'BATTERY'];

export function registerDeviceCommands(program: Command): void {
  program.command('devices')
    .description('List the lab\'s devices (a table; --json for the full records).')
    .option('-f, --filter <filter>', `which devices (repeatable): ${FILTER_KEYS}`, collect)
    .addHelpText('after', '\nExamples:\n  devicelab devices\n  devicelab devices --filter os=android,minOs=13,free\n'
      + '  devicelab devices --filter model=pixel --json | jq -r \'.[].id\'')
    .action(action(async (ctx: Context, opts: { filter?: string[] }) => {
      const filter = filterText(opts.filter);
      const devices = await ctx.api().get<Device[]>('/Device', { params: filter ? { filter } : {} });
      ctx.out.result(devices, () => (devices.length ? table(DEVICE_HEADERS, devices.map(deviceRow))
        : 'No device matches.\n'));
    }));

  program.command('retain')
    .argument('[device...]', 'device Guid, serial number or vendor id')
    .description('Retain devices (they are yours until released) and print their ids, one per line.')
    .option('-f, --filter <filter>', `retain devices matching this (repeatable): ${FILTER_KEYS}`, collect)
    .option('-n, --count <n>', 'how many matching devices (with --filter)', '1')
    .option('-w, --wait <duration>', 'wait this long for enough devices to be free (e.g. 30s, 10m)', '0')
    .addHelpText('after', '\nExamples:\n  devicelab retain 8ABX0001\n  devicelab retain --filter os=android,minOs=13 --count 2 --wait 10m\n'
      + '  IDS=$(devicelab retain --filter os=android --wait 5m)\n\nExit code 3 when not enough devices were free in time.')
    .action(action(async (ctx: Context, devices: string[], opts: { filter?: string[]; count: string; wait: string }) => {
      if (devices.length && opts.filter) throw usageError('Give device ids or --filter, not both.');
      if (!devices.length && !opts.filter) throw usageError('Name the device(s) to retain, or give --filter (e.g. --filter os=android).');
      const request = {
        devices: devices.length ? devices : undefined, filter: filterText(opts.filter),
        count: positiveInt(opts.count, '--count', 1), waitMs: durationOption(opts.wait, '--wait', 0),
      };
      const signal = interruptSignal();
      const retainer = new Retainer(ctx.api(), ctx.out, signal);
      try {
        const retained = await retainer.retain(request);
        if (signal.aborted) throw interrupted(signal);
        ctx.out.result(retained.map(({ device, ticket }) => ({ ...ticket, id: device.id, name: device.name })),
          () => retained.map(({ device }) => device.id).join('\n'));
        if (!ctx.out.json) for (const { device } of retained) ctx.out.note(`retained ${label(device)}; release it with \`devicelab release ${device.id}\``);
      } catch (err) {
        await retainer.releaseAll(); // all or nothing
        throw err;
      }
    }));

  program.command('release')
    .argument('<device...>', 'device Guid, serial number or vendor id')
    .description('Release devices you retained (or anyone\'s, with the Device release any entitlement).')
    .addHelpText('after', '\nExamples:\n  devicelab release 8ABX0001\n  devicelab release $(devicelab retain --filter os=android)')
    .action(action(async (ctx: Context, devices: string[]) => {
      const ids = devices.flatMap((d) => d.split(/[\s,]+/)).filter(Boolean);
      for (const id of ids) {
        await ctx.api().result('POST', '/Device', {
          params: { action: 'release', id },
          hint: 'Only the retainer (or a user with Device release any) can release it; `devicelab devices` shows who holds it.',
        });
      }
      ctx.out.result({ released: ids }, () => '');
      if (!ctx.out.json) ctx.out.note(`released ${ids.join(', ')}`);
    }));
}

/** Aborted on the first stop signal (or the end of the parent), so that a waiting retain stops and releases what it got. */
export function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  onStopSignals((signal) => controller.abort(signal));
  return controller.signal;
}
