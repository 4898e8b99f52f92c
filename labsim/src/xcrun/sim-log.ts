/**
 * `simctl spawn <udid> log show|stream --style compact`: the unified log's compact style (a header, then
 * `date time.ms Ty Process[pid:tid] message`). `show --last 5m` limits by age; `stream` prints what is logged
 * from now on, and a SpringBoard heartbeat now and then, until it is killed (as the real one runs until ^C).
 */
import { compactTime, type SimDeviceRecord, type SimStateStore } from './state';
import type { SimctlIo } from './simctl';

const HEADER = 'Timestamp               Ty Process[PID:TID]\n';
const POLL_MS = 250;
const HEARTBEAT_MS = 2_000;

export function showLog(device: SimDeviceRecord, args: string[], io: SimctlIo): number {
  const last = args.indexOf('--last');
  const span = last >= 0 ? ageMs(args[last + 1] ?? '') : undefined;
  const since = span === undefined ? 0 : Date.now() - span;
  io.out(HEADER);
  for (const line of device.log) if (timeOf(line) >= since) io.out(`${line}\n`);
  return 0;
}

export function followLog(store: SimStateStore, udid: string, io: SimctlIo): Promise<number> {
  io.out(HEADER);
  let lastLine = store.read().devices.find((d) => d.udid === udid)?.log.at(-1);
  let beat = Date.now();
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const device = store.read().devices.find((d) => d.udid === udid);
      if (!device || device.state !== 'Booted') {
        clearInterval(timer);
        resolve(0);
        return;
      }
      const from = lastLine === undefined ? 0 : device.log.lastIndexOf(lastLine) + 1;
      for (const line of device.log.slice(from)) io.out(`${line}\n`);
      lastLine = device.log.at(-1) ?? lastLine;
      if (Date.now() - beat >= HEARTBEAT_MS) {
        beat = Date.now();
        io.out(`${compactTime(new Date())} Db SpringBoard[60:1f4] [com.apple.SpringBoard:Heartbeat] idle\n`);
      }
    }, POLL_MS);
  });
}

/** `5m`, `30s`, `1h`, `2d`; a bare number is seconds. */
function ageMs(text: string): number | undefined {
  const m = /^(\d+)([smhd]?)$/.exec(text);
  if (!m) return undefined;
  const unit = { '': 1_000, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2]] ?? 1_000;
  return Number(m[1]) * unit;
}

function timeOf(line: string): number {
  const parsed = Date.parse(line.slice(0, 23).replace(' ', 'T'));
  return Number.isNaN(parsed) ? 0 : parsed;
}
