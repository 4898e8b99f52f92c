/** `connect`: the device's adb endpoint (iOS: its usbmux endpoint) on a local port, through the hub, until Ctrl-C. */
import type { Command } from 'commander';
import { adbConnect, adbDisconnect, registerAdbKey } from '../adb';
import { resolveTicket } from '../config';
import { action, type Context } from '../context';
import { type CliError, usageError } from '../errors';
import { label, Retainer } from '../retainer';
import { EARLY_ACK_WINDOW } from '../adb-early-ack';
import { onStopSignals } from '../stop-signals';
import { openTunnel, probeTunnel, refusal, refusalWarning, ticketTunnel, userTunnel, type TunnelTarget } from '../tunnel';

export function registerConnectCommand(program: Command): void {
  program.command('connect')
    .argument('<device>', 'device Guid, serial number or vendor id')
    .description('Open a tunnel to the device\'s adb endpoint on a local port (retaining the device if you do not hold it) until Ctrl-C or SIGTERM (exit 0).')
    .option('-p, --port <port>', 'local port (default: a free one)')
    .option('--adb', 'also run `adb connect` (and `adb disconnect` at the end)')
    .option('--early-acks <packets>', 'adb packets per stream the tunnel acknowledges before the device does, so that '
      + `a push does not wait for each packet's round trip through the hub (0: none)`, String(EARLY_ACK_WINDOW))
    .option('--ticket <authenticator>', 'open the tunnel with a retain ticket\'s authenticator instead of your login '
      + '(default: DEVICELAB_TICKET); the device must already be retained with it, and only the hub address is needed')
    .addHelpText('after', '\nExamples:\n  devicelab connect 8ABX0001            # prints: adb connect 127.0.0.1:<port>\n'
      + '  devicelab connect 8ABX0001 --adb --port 15037 &\n  adb -s 127.0.0.1:15037 shell\n'
      + '  DEVICELAB_TICKET=<authenticator> devicelab connect 8ABX0001 --url https://devicelab.example')
    .action(action(async (ctx: Context, device: string, opts: { port?: string; adb?: boolean; ticket?: string; earlyAcks: string }) => {
      const port = opts.port === undefined ? 0 : Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`--port ${opts.port}: give a port number (1-65535).`);
      const earlyAcks = Number(opts.earlyAcks);
      if (!Number.isInteger(earlyAcks) || earlyAcks < 0 || earlyAcks > 64) throw usageError(`--early-acks ${opts.earlyAcks}: give a number of packets (0-64).`);
      const controller = new AbortController();
      const stopListening = onStopSignals((signal) => controller.abort(signal), { watchParent: false });
      const ticket = resolveTicket({ ...ctx.globals, ticket: opts.ticket });
      if (ticket) {
        // The ticket already holds the device: nothing to retain, release or register, and no login needed.
        try {
          await serve(ctx, ticketTunnel(ticket.apiBase, ticket.authenticator, device), { device, port, adb: opts.adb, earlyAcks }, controller.signal, device);
          ctx.out.note(`${device} stays retained by its ticket`);
        } finally {
          stopListening();
        }
        return;
      }
      const api = ctx.api();
      const retainer = new Retainer(api, ctx.out, controller.signal);
      try {
        // A device this login holds already (under any lease) is connected to as it is, and stays retained
        // afterwards: only a retain this command makes is undone.
        const held = await retainer.heldByThisLogin(device);
        const [{ device: target }] = held ? [{ device: held }] : await retainer.retain({ devices: [device], count: 1, waitMs: 0 });
        const mine = held !== undefined;
        if (target.operatingSystem === 'Android') {
          // The device's adb endpoint lets in only its retainer's keys: this machine's, registered once.
          await registerAdbKey(api).catch((err: Error) => {
            if (opts.adb) throw err;
            ctx.out.warn(`${err.message} Until your adb key is registered, adb cannot authenticate through the tunnel.`);
          });
        } else if (target.operatingSystem !== 'iOS' || opts.adb) {
          ctx.out.warn('the tunnel carries the device\'s own endpoint; adb commands only work with Android devices');
        }
        await serve(ctx, userTunnel(api, target.id), { device: target.id, serialNumber: target.serialNumber, port, adb: opts.adb, earlyAcks },
          controller.signal, `${label(target)}`, mine ? '' : ' and releases the device');
        if (mine) ctx.out.note(`${label(target)} stays retained by you, as it was before; \`devicelab release ${target.id}\` releases it`);
      } finally {
        const held = retainer.retained.map((r) => label(r.device));
        await retainer.releaseAll();
        if (held.length) ctx.out.note(`released ${held.join(', ')}`);
        stopListening();
      }
    }));
}

/**
 * Probes the tunnel, listens, prints the `adb connect` line (iOS: the USBMUXD_SOCKET_ADDRESS one, as the hub says
 * what the tunnel carries) and relays until the signal. A connection the hub refuses for want of the right to the
 * device (the device was released, or retained by someone else) ends it: adb would retry it forever.
 */
async function serve(ctx: Context, target: TunnelTarget,
  options: { device: string; serialNumber?: string; port: number; adb?: boolean; earlyAcks: number },
  signal: AbortSignal, name: string, onClose = ''): Promise<void> {
  const usbmux = await probeTunnel(target) === 'usbmux';
  const adb = options.adb && !usbmux;
  let refused!: (err: CliError) => void;
  const ended = new Promise<void>((resolve, reject) => {
    refused = reject;
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  ended.catch(() => undefined); // a refusal during the adb connect is thrown by the `await ended` below
  const warn = refusalWarning(ctx.out);
  const tunnel = await openTunnel(target, ctx.out, {
    port: options.port, earlyAcks: usbmux ? 0 : options.earlyAcks,
    onRefused: (text, status, message) => (status === 401 || status === 403 ? refused(refusal(status, message, target)) : warn(text)),
  });
  try {
    if (adb) await adbConnect(tunnel.address);
    ctx.out.result({ deviceId: options.device, serialNumber: options.serialNumber, address: tunnel.address, port: tunnel.port },
      // An iOS device's tunnel is a usbmuxd that lists only that device, for libimobiledevice's tools.
      () => usbmux ? `export USBMUXD_SOCKET_ADDRESS=${tunnel.address}` : `adb connect ${tunnel.address}`);
    ctx.out.note(`tunnel to ${name} open on ${tunnel.address}${adb ? ' (adb connected)' : ''}; Ctrl-C closes it${onClose}`);
    await ended;
  } finally {
    if (adb) await adbDisconnect(tunnel.address);
    await tunnel.close();
    ctx.out.note(`closed the tunnel to ${name}`);
  }
}
