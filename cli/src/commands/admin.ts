/** `login`, `history`, `usage`, `gateways`, `users`, `token rotate`. */
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { ApiClient } from '../api-client';
import { apiBaseOf, configFilePath, readConfigFile, writeConfigFile } from '../config';
import { action, positiveInt, type Context } from '../context';
import { usageError } from '../errors';
import type { User } from '../models';
import { table } from '../output';
import { currentUser } from '../users';

interface ReportOptions { device?: string; user?: string; app?: string; days?: string; from?: string; to?: string; take: string; skip?: string }

function reportParams(opts: ReportOptions) {
  return {
    deviceId: opts.device, userId: opts.user, applicationId: opts.app, days: opts.days, fromDate: opts.from, toDate: opts.to,
    take: positiveInt(opts.take, '--take', 50), skip: opts.skip,
  };
}

function reportOptions(command: Command): Command {
  return command
    .option('--device <device>', 'only this device')
    .option('--user <guid>', 'only this user (Guid; `devicelab users` shows them)')
    .option('--app <guid>', 'only this application')
    .option('--days <n>', 'only the last n days')
    .option('--from <date>', 'from this date')
    .option('--to <date>', 'until this date')
    .option('--take <n>', 'at most this many entries', '50')
    .option('--skip <n>', 'skip this many entries (paging)');
}

const REPORT_HINT = 'Reports need the User list, Device list and Application list entitlements; check the filters you gave.';

export function registerAdminCommands(program: Command): void {
  program.command('login')
    .description('Check a hub address, login and API token, and store them for later commands '
      + '($XDG_CONFIG_HOME/devicelab/config.json, else ~/.config/devicelab/config.json; mode 0600).')
    .addHelpText('after', '\nExamples:\n  devicelab login --url http://devicelab.example:8080 --user qa@example.com --token <token>\n'
      + '  devicelab login            # asks for what is missing')
    .action(action(async (ctx: Context) => {
      const stored = readConfigFile();
      const ask = async (question: string, fallback?: string): Promise<string | undefined> => {
        if (!process.stdin.isTTY) return fallback;
        const rl = createInterface({ input: process.stdin, output: process.stderr });
        try {
          const answer = (await rl.question(`${question}${fallback ? ` [${fallback}]` : ''}: `)).trim();
          return answer || fallback;
        } finally {
          rl.close();
        }
      };
      const url = ctx.globals.url ?? await ask('Hub address (e.g. http://devicelab.example:8080)', stored.url);
      const user = ctx.globals.user ?? await ask('Login', stored.user);
      const token = ctx.globals.token ?? await ask('API token', undefined);
      if (!url || !user || !token) {
        throw usageError('Give --url, --user and --token (or run `devicelab login` on a terminal to be asked).');
      }
      const apiBase = apiBaseOf(url, '--url');
      const api = new ApiClient({ apiBase, url, user, token, source: { url: '--url', user: '--user', token: '--token' } });
      const me = await currentUser(api);
      writeConfigFile({ url, user, token });
      ctx.out.result({ url, user, id: me.id, roles: me.roles, configFile: configFilePath() }, () => '');
      if (!ctx.out.json) ctx.out.note(`logged in to ${apiBase} as ${user} (${(me.roles ?? []).join(', ') || 'no roles'}); saved in ${configFilePath()}`);
    }));

  reportOptions(program.command('history'))
    .description('Events of the lab: retains, installs, availability, logins (newest first).')
    .addHelpText('after', '\nExamples:\n  devicelab history --days 1\n  devicelab history --device 8ABX0001 --take 20 --json')
    .action(action(async (ctx: Context, opts: ReportOptions) => {
      const history = await ctx.api().get<{ count: number; events: Record<string, string | boolean | number | undefined>[] }>(
        '/Report/History', { params: reportParams(opts), hint: REPORT_HINT });
      ctx.out.result(history, () => `${table(['DATE', 'EVENT', 'DEVICE', 'BY', 'MESSAGE'], history.events.map((e) =>
        [e.EventDate ?? e.eventDate, e.eventType, e.deviceName, e.performedByName, e.message] as string[]))}${history.count} event(s) in all\n`);
    }));

  reportOptions(program.command('usage'))
    .description('Device usage records: who held or used which device, and for how long.')
    .addHelpText('after', '\nExamples:\n  devicelab usage --days 7\n  devicelab usage --device 8ABX0001 --json')
    .action(action(async (ctx: Context, opts: ReportOptions) => {
      const usage = await ctx.api().get<{ count: number; deviceUsage: Record<string, string | number | undefined>[] }>(
        '/Report/Usage', { params: reportParams(opts), hint: REPORT_HINT });
      ctx.out.result(usage, () => `${table(['DEVICE', 'USER', 'EVENT', 'APP', 'START', 'END', 'SECONDS'], usage.deviceUsage.map((u) =>
        [u.deviceName, u.performedByName, u.eventType, u.applicationName, u.startDate, u.endDate,
          typeof u.duration === 'number' ? Math.round(u.duration) : u.duration]))}${usage.count} record(s) in all\n`);
    }));

  program.command('gateways')
    .description('The lab hosts (gateways) and their USB hubs.')
    .addHelpText('after', '\nExamples:\n  devicelab gateways\n  devicelab gateways --json')
    .action(action(async (ctx: Context) => {
      type Hub = { serialNumber?: string; model?: string; isErrored?: boolean; errorMessage?: string; devices?: unknown[] };
      const gateways = await ctx.api().get<{ name: string; publicAddress?: string; publicPort?: number; usbHubList?: Hub[] }[]>(
        '/Gateway', { hint: 'Listing gateways needs the View gateways entitlement.' });
      ctx.out.result(gateways, () => table(['GATEWAY', 'ADDRESS', 'USB HUBS'], gateways.map((g) => [g.name,
        g.publicAddress ? `${g.publicAddress}:${g.publicPort ?? ''}` : undefined,
        (g.usbHubList ?? []).map((h) => `${h.serialNumber ?? '?'} (${h.devices?.length ?? 0} ports${h.isErrored ? `, ERROR: ${h.errorMessage}` : ''})`).join('; ')])));
    }));

  program.command('users')
    .description('The users of the hub (only yourself without the User list entitlement).')
    .addHelpText('after', '\nExamples:\n  devicelab users\n  devicelab users --json')
    .action(action(async (ctx: Context) => {
      const users = await ctx.api().get<User[]>('/User');
      ctx.out.result(users, () => table(['ID', 'LOGIN', 'NAME', 'ROLES', 'ACTIVE', 'LAST LOGIN'], users.map((u) => [u.id, u.email,
        [u.firstName, u.lastName].filter(Boolean).join(' '), (u.roles ?? []).join(','), u.isActive, u.lastLoginDate])));
    }));

  const token = program.command('token').description('Your API token.');
  token.command('rotate')
    .description('Get a new API token (the old one stops working at once); updates the stored login when it came from there.')
    .addHelpText('after', '\nExamples:\n  devicelab token rotate\n  devicelab token rotate --json | jq -r .apiToken')
    .action(action(async (ctx: Context) => {
      const api = ctx.api();
      const me = await currentUser(api);
      const { apiToken } = await api.result<{ apiToken: string }>('POST', '/User', {
        params: { action: 'generateToken', id: me.id }, hint: 'Rotating your own token needs the User modify self entitlement.',
      });
      const file = configFilePath();
      const stored = api.credentials.source.token === file;
      if (stored) writeConfigFile({ ...readConfigFile(file), token: apiToken });
      ctx.out.result({ apiToken, storedIn: stored ? file : undefined }, () => apiToken);
      if (!ctx.out.json) {
        ctx.out.note(stored ? `the new token is saved in ${file}`
          : `the old token no longer works: update ${api.credentials.source.token} (e.g. your CI secret) with the new one`);
      }
    }));
}
