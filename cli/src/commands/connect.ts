/** `connect`: the device's adb endpoint on a local port, through the hub, until Ctrl-C. */
import type { Command } from 'commander';
import { adbConnect, adbDisconnect, registerAdbKey } from '../adb';
import { action, type Context } from '../context';
import { usageError } from '../errors';
import { label, Retainer } from '../retainer';
import { openTunnel, probeTunnel } from '../tunnel';

export function registerConnectCommand(program: Command): void {
  program.command('connect')
    .argument('<device>', 'device Guid, serial number or vendor id')
    .description('Open a tunnel to the device\'s adb endpoint on a local port (retaining the device if you do not hold it) until Ctrl-C or SIGTERM (exit 0).')
    .option('-p, --port <port>', 'local port (default: a free one)')
    .option('--adb', 'also run `adb connect` (and `adb disconnect` at the end)')
    .addHelpText('after', '\nExamples:\n  devicelab connect 8ABX0001            # prints: adb connect 127.0.0.1:<port>\n'
      + '  devicelab connect 8ABX0001 --adb --port 15037 &\n  adb -s 127.0.0.1:15037 shell')
    .action(action(async (ctx: Context, device: string, opts: { port?: string; adb?: boolean }) => {
      const port = opts.port === undefined ? 0 : Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`--port ${opts.port}: give a port number (1-65535).`);
      const api = ctx.api();
      const controller = new AbortController();
      const stop = (signal: NodeJS.Signals) => controller.abort(signal);
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      const retainer = new Retainer(api, ctx.out, controller.signal);
      try {
        const [{ device: target }] = await retainer.retain({ devices: [device], count: 1, waitMs: 0 });
        // A device this login held before stays retained afterwards: only a retain we started is undone.
        const mine = target.retainedByUserName?.toLowerCase() === api.credentials.user.toLowerCase();
        if (mine) retainer.retained.splice(0);
        if (target.operatingSystem === 'Android') {
          // The device's adb endpoint lets in only its retainer's keys: this machine's, registered once.
          await registerAdbKey(api).catch((err: Error) => {
            if (opts.adb) throw err;
            ctx.out.warn(`${err.message} Until your adb key is registered, adb cannot authenticate through the tunnel.`);
          });
        } else {
          ctx.out.warn('the tunnel carries the device\'s own endpoint; adb commands only work with Android devices');
        }
        await probeTunnel(api, target.id);
        const tunnel = await openTunnel(api, target.id, ctx.out, { port });
        if (opts.adb) await adbConnect(tunnel.address);
        ctx.out.result({ deviceId: target.id, serialNumber: target.serialNumber, address: tunnel.address, port: tunnel.port },
          () => `adb connect ${tunnel.address}`);
        ctx.out.note(`tunnel to ${label(target)} open on ${tunnel.address}${opts.adb ? ' (adb connected)' : ''}; Ctrl-C closes it`
          + `${mine ? '' : ' and releases the device'}`);
        if (!controller.signal.aborted) await new Promise((resolve) => controller.signal.addEventListener('abort', resolve, { once: true }));
        if (opts.adb) await adbDisconnect(tunnel.address);
        await tunnel.close();
      } finally {
        await retainer.releaseAll();
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    }));
}
