/** `reserve`, `reservations` and `renew`: bookings of devices (/Reservation) and the lease of a retained device. */
import type { Command } from 'commander';
import { action, durationOption, positiveInt, type Context } from '../context';
import { usageError } from '../errors';
import { table } from '../output';

interface Booking { id: string; deviceId: string; deviceName?: string; reservedByDisplayName?: string; start: string; end: string; note?: string }

/** `now` or an ISO 8601 time as the hub reads it. */
function timeOption(value: string, name: string): string {
  if (value.toLowerCase() === 'now') return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (Number.isNaN(Date.parse(value))) throw usageError(`${name} ${value}: give a time such as 2026-11-28T09:00:00Z, or now.`);
  return value;
}

export function registerLeaseCommands(program: Command): void {
  program.command('reserve')
    .argument('<device>', 'device Guid, serial number or vendor id')
    .description('Book a device for a time: only you may retain it then, and it is held for you when the booking starts.')
    .option('--start <time>', 'when the booking starts (ISO 8601, or now)', 'now')
    .option('--for <duration>', 'how long (e.g. 2h, 90m); or give --end')
    .option('--end <time>', 'when the booking ends (ISO 8601)')
    .option('--note <text>', 'what it is for (shown to others)')
    .addHelpText('after', '\nExamples:\n  devicelab reserve 8ABX0001 --for 2h --note "release testing"\n'
      + '  devicelab reserve 8ABX0001 --start 2026-11-28T09:00:00Z --end 2026-11-28T17:00:00Z')
    .action(action(async (ctx: Context, device: string, opts: { start: string; for?: string; end?: string; note?: string }) => {
      if (!opts.for === !opts.end) throw usageError('Give how long the booking lasts: --for 2h, or --end <time>.');
      const start = timeOption(opts.start, '--start');
      const end = opts.end ? timeOption(opts.end, '--end')
        : new Date(Date.parse(start) + durationOption(opts.for, '--for', 0)).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const booking = await ctx.api().result<Booking>('POST', '/Reservation?add', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ deviceId: device, start, end, note: opts.note ?? '' }),
        hint: '`devicelab reservations --device <device>` shows the bookings in the way.',
      });
      ctx.out.result(booking, () => `${booking.id}\n`);
      if (!ctx.out.json) ctx.out.note(`booked ${booking.deviceName ?? device} from ${booking.start} to ${booking.end}; cancel with \`devicelab reservations --cancel ${booking.id}\``);
    }));

  program.command('reservations')
    .description('The bookings that have not ended, every user\'s, by start time (--cancel <id> cancels one).')
    .option('--device <device>', 'only this device\'s bookings')
    .option('--cancel <id>', 'cancel this booking (yours; anyone\'s with Device release any)')
    .addHelpText('after', '\nExamples:\n  devicelab reservations\n  devicelab reservations --device 8ABX0001 --json\n'
      + '  devicelab reservations --cancel <reservation id>')
    .action(action(async (ctx: Context, opts: { device?: string; cancel?: string }) => {
      if (opts.cancel) {
        await ctx.api().result('POST', '/Reservation', { params: { action: 'delete', id: opts.cancel } });
        ctx.out.result({ cancelled: opts.cancel }, () => '');
        if (!ctx.out.json) ctx.out.note(`cancelled ${opts.cancel}`);
        return;
      }
      const bookings = await ctx.api().result<Booking[]>('GET', '/Reservation', { params: opts.device ? { deviceId: opts.device } : {} });
      ctx.out.result(bookings, () => (bookings.length ? table(['ID', 'DEVICE', 'BOOKED BY', 'START', 'END', 'NOTE'],
        bookings.map((b) => [b.id, b.deviceName ?? b.deviceId, b.reservedByDisplayName, b.start, b.end, b.note])) : 'No bookings.\n'));
    }));

  program.command('renew')
    .argument('<device>', 'device Guid, serial number or vendor id')
    .description('Renew your lease of a retained device before it ends (up to your maximum lease length).')
    .option('--minutes <n>', 'the new lease length from now (default: your maximum)')
    .addHelpText('after', '\nExamples:\n  devicelab renew 8ABX0001\n  devicelab renew 8ABX0001 --minutes 30')
    .action(action(async (ctx: Context, device: string, opts: { minutes?: string }) => {
      const params: Record<string, string> = { action: 'renew', id: device };
      if (opts.minutes) params.minutes = String(positiveInt(opts.minutes, '--minutes', 1));
      const terms = await ctx.api().result<{ leaseEndTime?: string }>('POST', '/Device', { params });
      ctx.out.result(terms, () => `${terms.leaseEndTime ?? 'no end'}\n`);
      if (!ctx.out.json) ctx.out.note(terms.leaseEndTime ? `the lease of ${device} now ends at ${terms.leaseEndTime}` : `the lease of ${device} has no maximum length`);
    }));
}
