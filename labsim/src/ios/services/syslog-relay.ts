/**
 * com.apple.syslog_relay: from the moment the host connects, every line the device logs, each terminated by
 * "\n\0" (the splitter pymobiledevice3 and idevicesyslog rely on). No request, no history.
 */
import type { SimIosDevice } from '../device';
import type { ByteLink } from '../plist-channel';

export function serveSyslogRelay(device: SimIosDevice, link: ByteLink): void {
  const unsubscribe = device.syslog.subscribe((line) => link.write(Buffer.from(`${line}\n\0`, 'utf8')));
  link.on('close', unsubscribe);
}
