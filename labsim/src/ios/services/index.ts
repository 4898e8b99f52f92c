/**
 * The lockdown services a simulated device offers (StartService names), each in its own file. `ssl` is
 * EnableServiceSSL: none of these asks for it on a real device over USB.
 */
import type * as net from 'node:net';
import type { SimIosDevice } from '../device';
import type { ByteLink } from '../plist-channel';
import { SwitchableTransport, deviceSecureContext, type DeviceTlsIdentity } from '../tls-upgrade';
import { serveAfc } from './afc';
import { serveDiagnosticsRelay } from './diagnostics-relay';
import { serveInstallationProxy } from './installation-proxy';
import { serveScreenshotr } from './screenshotr';
import { serveSyslogRelay } from './syslog-relay';

export interface ServiceContext {
  device: SimIosDevice;
  /** The session's pairing, for services with EnableServiceSSL. */
  tlsIdentity: DeviceTlsIdentity | undefined;
}

interface IosService {
  ssl: boolean;
  /** A service of the Developer Disk Image: offered only while one is mounted. */
  developer?: boolean;
  serve(context: ServiceContext, socket: net.Socket): void;
}

function service(ssl: boolean, serve: (device: SimIosDevice, link: ByteLink) => void): IosService {
  return {
    ssl,
    serve(context, socket) {
      const transport = new SwitchableTransport(socket);
      if (ssl) {
        if (!context.tlsIdentity) return void socket.destroy();
        transport.startTls(deviceSecureContext(context.tlsIdentity));
      }
      context.device.track(transport);
      serve(context.device, transport);
    },
  };
}

export const IOS_SERVICES: Record<string, IosService> = {
  'com.apple.afc': service(false, serveAfc),
  'com.apple.mobile.installation_proxy': service(false, serveInstallationProxy),
  'com.apple.syslog_relay': service(false, serveSyslogRelay),
  'com.apple.mobile.diagnostics_relay': service(false, serveDiagnosticsRelay),
  'com.apple.mobile.screenshotr': { ...service(false, serveScreenshotr), developer: true },
};
