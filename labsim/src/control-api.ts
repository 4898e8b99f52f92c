/**
 * Small HTTP control API over a LabWorld (JSON, 127.0.0.1 only), so demos and
 * non-TypeScript tooling can drive the lab:
 *
 *   GET  /devices                             (Android)
 *   GET  /ios-devices                         (iOS; :serial below may be a UDID for plug, unplug, reboot,
 *                                              fail-next-install and battery)
 *   POST /devices/:serial/plug | unplug | reboot
 *   POST /devices/:serial/fail-next-install   {"code":"INSUFFICIENT_STORAGE"} (iOS: {"code":"ApplicationVerificationFailed"})
 *   POST /devices/:serial/unauthorized        {"unauthorized":true}
 *   POST /devices/:serial/battery             {"level":50,"usbPowered":false}
 *   GET  /devices/:serial/am-start-log
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { INSTALL_ERRORS as IOS_INSTALL_ERRORS } from './ios/device';
import type { LabWorld } from './world';

export interface ControlApi {
  port: number;
  url: string;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new HttpError(400, 'body must be a JSON object');
}

async function route(world: LabWorld, method: string, url: URL, req: http.IncomingMessage): Promise<unknown> {
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'ios-devices' && parts.length === 1 && method === 'GET') return world.iosDevices();
  if (parts[0] !== 'devices') throw new HttpError(404, 'not found');
  if (parts.length === 1 && method === 'GET') return world.devices();
  const serial = parts[1];
  const ios = world.iosDevices().find((d) => d.udid === serial);
  if (!ios && !world.devices().some((d) => d.serial === serial || d.adbSerial === serial)) throw new HttpError(404, `unknown device ${serial}`);
  const action = parts[2];
  if (ios && (action === 'am-start-log' || action === 'unauthorized')) throw new HttpError(404, `${action} is for Android devices`);
  if (method === 'GET' && action === 'am-start-log') return world.amStartLog(serial);
  if (method === 'GET' && action === undefined) return ios ?? world.devices().find((d) => d.serial === serial || d.adbSerial === serial);
  if (method !== 'POST') throw new HttpError(405, 'method not allowed');
  const body = await readJson(req);
  switch (action) {
    case 'plug':
      return { state: await world.plug(serial) };
    case 'unplug':
      await world.unplug(serial);
      return { ok: true };
    case 'reboot':
      await world.reboot(serial, {
        ...(typeof body.rebootMs === 'number' ? { rebootMs: body.rebootMs } : {}),
        ...(typeof body.bootCompleteMs === 'number' ? { bootCompleteMs: body.bootCompleteMs } : {}),
      });
      return { ok: true };
    case 'fail-next-install':
      if (typeof body.code !== 'string' || !body.code) throw new HttpError(400, 'code (string) required');
      if (ios && !IOS_INSTALL_ERRORS[body.code]) {
        throw new HttpError(400, `code must be an installd error name: ${Object.keys(IOS_INSTALL_ERRORS).join(', ')}`);
      }
      await world.failNextInstall(serial, body.code);
      return { ok: true };
    case 'unauthorized':
      return { state: await world.setUnauthorized(serial, body.unauthorized !== false) };
    case 'battery': {
      const level = body.level;
      if (level !== undefined && (typeof level !== 'number' || level < 0 || level > 100)) throw new HttpError(400, 'level must be 0-100');
      await world.setBattery(serial, {
        ...(typeof level === 'number' ? { level } : {}),
        ...(typeof body.usbPowered === 'boolean' ? { usbPowered: body.usbPowered } : {}),
      });
      return { ok: true };
    }
    default:
      throw new HttpError(404, `unknown action ${action ?? ''}`);
  }
}

export async function startControlApi(world: LabWorld, port = 0): Promise<ControlApi> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    route(world, req.method ?? 'GET', url, req)
      .then((body) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      })
      .catch((e: Error) => {
        res.writeHead(e instanceof HttpError ? e.status : 500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: e.message }));
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    port: actual,
    url: `http://127.0.0.1:${actual}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
