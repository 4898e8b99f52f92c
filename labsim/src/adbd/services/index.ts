/**
 * Service dispatch: maps the OPEN payload (e.g. "shell,v2,raw:ls") to a
 * service implementation. Only services matching advertised features exist.
 */
import type { AdbStream } from '../stream';
import type { DevicePort } from '../device-port';
import { startShellService } from './shell';
import { startSyncService } from './sync';
import { startAbbExecService, startExecService } from './exec';
import { startSocketService } from './socket';
import { parseSocketSpec } from '../../android/device-sockets';

/** Returns a starter to run after OKAY was sent, or null to refuse the stream. */
type ServiceStarter = () => void;

export function openService(service: string, stream: AdbStream, device: DevicePort): ServiceStarter | null {
  if (service === 'shell' || service.startsWith('shell:') || service.startsWith('shell,')) {
    const colon = service.indexOf(':');
    const options = colon < 0 ? service.slice(5) : service.slice(5, colon);
    const command = colon < 0 ? '' : service.slice(colon + 1);
    const v2 = options.split(',').includes('v2');
    return () => startShellService(stream, device, command, v2);
  }
  if (service.startsWith('exec:')) {
    return () => startExecService(stream, device, service.slice(5));
  }
  if (service.startsWith('abb_exec:')) {
    return () => startAbbExecService(stream, device, service.slice(9).split('\0').filter((a) => a !== ''));
  }
  const address = parseSocketSpec(service);
  if (address) {
    // Nothing listening: refused, as adbd closes a stream whose connect(2) fails.
    const socket = device.connectSocket(address);
    return socket ? () => startSocketService(stream, socket) : null;
  }
  if (service === 'sync:') {
    return () => startSyncService(stream, device);
  }
  if (service.startsWith('reboot:')) {
    const target = service.slice(7);
    return () => {
      // Let the host see the stream close before the transport goes away.
      stream.end();
      setTimeout(() => device.reboot(target), 50);
    };
  }
  if (service === 'root:') {
    return () => stream.end('adbd cannot run as root in production builds\n');
  }
  if (service === 'unroot:') {
    return () => stream.end('adbd not running as root\n');
  }
  return null;
}
