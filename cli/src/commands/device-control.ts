/** `reboot`, `reset`, `port`, `logs`, `metrics`, `marker`. */
import type { Command } from 'commander';
import { action, durationOption, positiveInt, type Context } from '../context';
import { CliError, EXIT, usageError, type FailureCode } from '../errors';
import { table } from '../output';

const HOLD_HINT = 'Retain the device first (`devicelab retain <device>`) and check that it is online (`devicelab devices`).';

export function registerDeviceControlCommands(program: Command): void {
  program.command('reboot')
    .argument('<device>', 'device Guid, serial number or vendor id')
    .description('Reboot a device (it reads Offline until it is back).')
    .addHelpText('after', '\nExample:\n  devicelab reboot 8ABX0001')
    .action(action(async (ctx: Context, device: string) => {
      await ctx.api().result('POST', '/Device', { params: { action: 'reboot', id: device }, timeoutMs: 180_000, hint: HOLD_HINT });
      ctx.out.result({ rebooted: device }, () => '');
      if (!ctx.out.json) ctx.out.note(`rebooting ${device}`);
    }));

  program.command('reset')
    .argument('<device>', 'device Guid, serial number or vendor id')
    .description('Reset a device: remove user-installed apps and/or reboot (the hub\'s settings decide what is not given).')
    .option('--uninstall-all', 'remove every user-installed application')
    .option('--no-uninstall-all', 'keep the applications')
    .option('--reboot', 'reboot afterwards')
    .option('--no-reboot', 'do not reboot')
    .addHelpText('after', '\nExamples:\n  devicelab reset 8ABX0001\n  devicelab reset 8ABX0001 --uninstall-all --no-reboot')
    .action(action(async (ctx: Context, device: string, opts: { uninstallAll?: boolean; reboot?: boolean }) => {
      await ctx.api().result('POST', '/Device', {
        params: { action: 'reset', id: device, uninstallAll: opts.uninstallAll, reboot: opts.reboot }, timeoutMs: 600_000, hint: HOLD_HINT,
      });
      ctx.out.result({ reset: device }, () => '');
      if (!ctx.out.json) ctx.out.note(`reset ${device}`);
    }));

  program.command('port')
    .argument('<device>', 'device Guid, serial number or vendor id, or * for every device')
    .argument('<state>', 'off, data (or sync, its other name) or charge')
    .description('Switch the USB hub port a device hangs from: off, data (connected) or charge (charging only).')
    .addHelpText('after', '\nExamples:\n  devicelab port 8ABX0001 off\n  devicelab port 8ABX0001 data\n  devicelab port \'*\' charge')
    .action(action(async (ctx: Context, device: string, state: string) => {
      const wire = ({ off: 'Off', data: 'Data', sync: 'Data', charge: 'Charge' } as Record<string, string>)[state.toLowerCase()];
      if (!wire) throw usageError(`Port state '${state}': use off, data (or sync) or charge.`);
      await ctx.api().result('POST', '/Device/UsbPort?update', {
        params: { id: device, usbHubPortState: wire }, timeoutMs: 120_000,
        hint: 'Check that the device hangs from a managed USB hub (`devicelab gateways`).',
      });
      ctx.out.result({ device, state: wire }, () => '');
      if (!ctx.out.json) ctx.out.note(`port of ${device} is ${wire}`);
    }));

  program.command('logs')
    .argument('<device>', 'device Guid, serial number or vendor id')
    .description('Print the device\'s system log (logcat, iOS syslog); --follow keeps printing new lines until Ctrl-C.')
    .option('-n, --lines <n>', 'how many of the last lines', '500')
    .option('-F, --follow', 'keep printing new lines')
    .option('--interval <duration>', 'how often --follow asks the hub', '2s')
    .addHelpText('after', '\nExamples:\n  devicelab logs 8ABX0001 --lines 100\n  devicelab logs 8ABX0001 --follow | grep -i exception')
    .action(action(async (ctx: Context, device: string, opts: { lines: string; follow?: boolean; interval: string }) => {
      const lines = positiveInt(opts.lines, '--lines', 500);
      const read = async () => (await ctx.api().result<string>('GET', '/Device/Log', {
        params: { id: device, lines }, timeoutMs: 120_000, hint: 'Check that the device is online (`devicelab devices`).',
      })).split('\n').filter((line, i, all) => line !== '' || i < all.length - 1).slice(-lines);
      let previous = await read();
      if (!opts.follow || ctx.out.json) {
        ctx.out.result(previous, () => previous.join('\n'));
        return;
      }
      process.stdout.write(previous.map((line) => `${line}\n`).join(''));
      const intervalMs = durationOption(opts.interval, '--interval', 2000);
      let stopped = false;
      process.once('SIGINT', () => { stopped = true; });
      process.once('SIGTERM', () => { stopped = true; });
      while (!stopped) {
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
        if (stopped) break;
        const current = await read();
        process.stdout.write(newLines(previous, current).map((line) => `${line}\n`).join(''));
        previous = current;
      }
    }));

  program.command('metrics')
    .argument('<device>', 'device Guid, serial number or vendor id')
    .description('Query a device\'s metrics (spec 4.3): a table, --csv, or the hub\'s JSON document with --json.')
    .option('-t, --table <tables>', 'usb_hub, log, health_check or sample (comma separated)', 'sample')
    .option('--fields <fields>', 'comma-separated fields, e.g. "Used,Load,Bytes In Per Second"')
    .option('--aggr <functions>', 'aggregates per field: mean, max, min, count, percentile_95, ...')
    .option('-m, --marker <name>', 'only the periods of this marker (session: each retain)')
    .option('--marker-limit <n>', 'how many of the most recent marker periods')
    .option('--since <duration>', 'from this long ago (when no marker, start or limit is given: 1h)')
    .option('--start <date>', 'from this date/time')
    .option('--end <date>', 'until this date/time')
    .option('--limit <n>', 'at most this many rows per series')
    .option('--group-by <field>', 'one series per value of this field')
    .option('--desc', 'newest first')
    .option('--csv', 'print the hub\'s CSV')
    .addHelpText('after', '\nExamples:\n  devicelab metrics 8ABX0001 --fields Used,Load --since 10m\n'
      + '  devicelab metrics 8ABX0001 --marker session --fields Load --aggr mean,max\n'
      + '  devicelab metrics 8ABX0001 --table log --limit 100 --desc --csv > log.csv')
    .action(action(async (ctx: Context, device: string, opts: MetricsOptions) => {
      const sinceMs = opts.since ? durationOption(opts.since, '--since', 0) : undefined;
      const bounded = opts.marker || opts.start || opts.end || opts.limit;
      const start = opts.start ?? (sinceMs !== undefined || !bounded ? new Date(Date.now() - (sinceMs ?? 3600_000)).toISOString() : undefined);
      const params = {
        id: device, table: opts.table, fields: opts.fields, aggr: opts.aggr, marker: opts.marker, markerLimit: opts.markerLimit,
        start, end: opts.end, limit: opts.limit, groupBy: opts.groupBy, orderBy: opts.desc ? 'time desc' : undefined,
        format: opts.csv ? 'csv' : undefined,
      };
      const response = await ctx.api().raw('GET', '/Device/Metrics', { params, timeoutMs: 150_000 });
      const text = await response.text();
      if ((response.headers.get('content-type') ?? '').includes('json')) {
        const value = JSON.parse(text) as InfluxDocument & { isSuccess?: boolean; errorMessage?: string; errorCode?: FailureCode };
        if (value.isSuccess === false) throw ctx.api().failure(value, 'GET /Device/Metrics', '`devicelab metrics --help` lists the options.');
        if (opts.csv) throw new CliError('The hub answered JSON to a CSV query; it may be older than this CLI.', EXIT.apiFailure);
        ctx.out.result(value, () => influxTables(value));
        return;
      }
      process.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
    }));

  const marker = program.command('marker').description('Name a period of a device, to query its metrics later (--marker).');
  for (const verb of ['start', 'stop'] as const) {
    marker.command(verb)
      .argument('<device>', 'device Guid, serial number or vendor id')
      .argument('<name>', 'marker name (any text)')
      .description(verb === 'start' ? 'Open a marker on a device.' : 'Close the marker of that name on the device.')
      .addHelpText('after', `\nExample:\n  devicelab marker ${verb} 8ABX0001 "checkout flow"`)
      .action(action(async (ctx: Context, device: string, name: string) => {
        await ctx.api().result('POST', '/Device/Metrics', {
          params: { action: `${verb}marker`, id: device, name },
          hint: verb === 'stop' ? `Start it first with \`devicelab marker start ${device} <name>\`.` : 'Check the device id (`devicelab devices`).',
        });
        ctx.out.result({ device, marker: name, action: verb }, () => '');
        if (!ctx.out.json) ctx.out.note(`marker '${name}' ${verb === 'start' ? 'started' : 'stopped'} on ${device}`);
      }));
  }
}

interface MetricsOptions {
  table: string; fields?: string; aggr?: string; marker?: string; markerLimit?: string; since?: string; start?: string;
  end?: string; limit?: string; groupBy?: string; desc?: boolean; csv?: boolean;
}

interface InfluxDocument {
  results?: { series?: { name: string; tags?: Record<string, string>; columns: string[]; values: unknown[][] }[]; error?: string }[];
}

function influxTables(doc: InfluxDocument): string {
  const parts: string[] = [];
  for (const result of doc.results ?? []) {
    for (const series of result.series ?? []) {
      const tags = Object.entries(series.tags ?? {}).map(([k, v]) => `${k}=${v}`).join(' ');
      parts.push(`${series.name}${tags ? ` (${tags})` : ''}\n${table(series.columns, series.values.map((row) =>
        row.map((cell) => (typeof cell === 'object' && cell !== null ? JSON.stringify(cell) : cell as string)))) }`);
    }
  }
  return parts.length ? parts.join('\n') : 'No rows in that period.\n';
}

/**
 * The lines of `current` that `previous` had not shown. Both are windows of the last N lines of one log, so the
 * window slid on: the longest tail of `previous` that `current` starts with is old, the rest is new (all of it
 * when the log moved on by more than a window).
 */
export function newLines(previous: string[], current: string[]): string[] {
  for (let k = Math.min(previous.length, current.length); k > 0; k--) {
    if (current.slice(0, k).every((line, i) => line === previous[previous.length - k + i])) return current.slice(k);
  }
  return current;
}
