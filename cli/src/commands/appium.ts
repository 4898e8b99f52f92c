/**
 * `appium`: the lab's WebDriver endpoint for Appium suites. Without a command it prints the endpoint and the
 * capabilities that pick a device like `--filter`; with one it runs it with DEVICELAB_APPIUM_URL (credentials in the
 * URL, as WebDriver clients take them) and DEVICELAB_APPIUM_CAPABILITIES (JSON) set, and exits with its code. The
 * hub retains a device per session and queues sessions for busy devices; nothing is retained here.
 */
import type { Command } from 'commander';
import { childEnvironment } from '../config';
import { action, durationOption, type Context } from '../context';
import { FILTER_KEYS } from '../device-filter';
import { usageError } from '../errors';
import { CommandGroup } from '../process-group';
import { onStopSignals } from '../stop-signals';
import { collect } from './devices';
import { waitForCommand } from './run';

interface AppiumOptions {
  filter?: string[];
  device?: string;
  wait: string;
  app?: string;
  showToken?: boolean;
}

const MAX_QUEUE_SECONDS = 900;

export function registerAppiumCommand(program: Command): void {
  program.command('appium')
    .argument('[command...]', 'a command to run with DEVICELAB_APPIUM_URL and DEVICELAB_APPIUM_CAPABILITIES set (after --)')
    .description('Print the lab\'s Appium (WebDriver) endpoint and capabilities, or run a suite against it.')
    .option('-f, --filter <filter>', `which devices (repeatable): ${FILTER_KEYS}`, collect)
    .option('-d, --device <device>', 'one device by Guid, serial or vendor id')
    .option('-w, --wait <duration>', 'how long a session may wait in the lab\'s line for a device (at most 15m)', '5m')
    .option('--app <app>', 'a library application (Guid, name or package) the hub installs before each session')
    .option('--show-token', 'print your API token in the URL and capabilities instead of <token>')
    .addHelpText('after', `
The command gets DEVICELAB_APPIUM_URL (http://<user>:<token>@<hub>/Appium) and DEVICELAB_APPIUM_CAPABILITIES
(a JSON object to merge into the suite's capabilities). Each session the suite creates retains a matching
device for you and releases it when the session is deleted (or idle for its newCommandTimeout); a matching
device you hold already (devicelab retain) is used at once and stays yours after the session.

Examples:
  devicelab appium --filter os=android,minOs=13
  devicelab appium --filter os=android --wait 10m -- npx wdio run wdio.conf.js
  devicelab appium --device 8ABX0001 --app com.example.shop -- mvn test`)
    .action(action(async (ctx: Context, command: string[], opts: AppiumOptions) => appiumCommand(ctx, command, opts)));
}

async function appiumCommand(ctx: Context, command: string[], opts: AppiumOptions): Promise<number | void> {
  if (opts.device && opts.filter) throw usageError('Give --device or --filter, not both.');
  const waitSeconds = Math.ceil(durationOption(opts.wait, '--wait', 300_000) / 1000);
  if (waitSeconds > MAX_QUEUE_SECONDS) throw usageError(`--wait ${opts.wait}: the lab's line waits at most 15m.`);
  const { credentials } = ctx.api();
  const endpoint = new URL(credentials.apiBase.replace(/\/apiv1$/, '/Appium'));
  const filter = (opts.filter ?? []).join(',');
  const capabilities: Record<string, unknown> = { 'devicelab:queueTimeout': waitSeconds };
  if (filter) capabilities['devicelab:filter'] = filter;
  if (opts.device) capabilities['appium:udid'] = opts.device;
  if (opts.app) capabilities['devicelab:app'] = opts.app;
  const withCredentials = (token: string) => {
    const url = new URL(endpoint);
    url.username = encodeURIComponent(credentials.user);
    url.password = encodeURIComponent(token);
    return url.toString();
  };
  if (command.length === 0) {
    const token = opts.showToken ? credentials.token : '<token>';
    const productCaps = { ...capabilities, 'appium:deviceConnectUserName': credentials.user, 'appium:deviceConnectApiKey': token };
    ctx.out.result({ url: withCredentials(token), endpoint: endpoint.toString(), capabilities, capabilitiesWithCredentials: productCaps }, () =>
      `endpoint:     ${endpoint}\nwith Basic:   ${withCredentials(token)}\ncapabilities: ${JSON.stringify(capabilities)}\n`
      + `or, without Basic auth, these capabilities:\n              ${JSON.stringify(productCaps)}\n`);
    return;
  }
  const group = new CommandGroup(command, {
    stdio: 'inherit', shell: command.length === 1,
    env: childEnvironment({
      DEVICELAB_APPIUM_URL: withCredentials(credentials.token), DEVICELAB_APPIUM_CAPABILITIES: JSON.stringify(capabilities),
      DEVICELAB_URL: credentials.url,
    }),
  });
  const stopListening = onStopSignals((signal) => { group.signal(signal); });
  try {
    return await waitForCommand(group, ctx, command);
  } finally {
    stopListening();
  }
}
