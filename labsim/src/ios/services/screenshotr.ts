/**
 * com.apple.mobile.screenshotr: DeviceLink messages (arrays) in lockdown's framing (4-byte big-endian length +
 * property list). The device opens with a version exchange (`DLMessageVersionExchange`, 300, 0), the host answers
 * `DLVersionsOk`, the device says `DLMessageDeviceReady`; then each `ScreenShotRequest` gets a `ScreenShotReply`
 * carrying the PNG of what the display shows (the home screen or the app in front), until the host sends
 * `DLMessageDisconnect`.
 */
import { PlistValue, decodePlistValue, encodePlist, isDict } from '@devicelab/shared';
import type { SimIosDevice } from '../device';
import type { ByteLink } from '../plist-channel';

/** No DeviceLink message from a host comes near this. */
const MAX_FRAME = 1024 * 1024;
const VERSION_MAJOR = 300;

function frame(message: PlistValue): Buffer {
  const body = encodePlist(message);
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

export function serveScreenshotr(device: SimIosDevice, link: ByteLink): void {
  let pending = Buffer.alloc(0);
  let ready = false;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    link.destroy();
  };
  const handle = (message: PlistValue): void => {
    if (!Array.isArray(message) || typeof message[0] !== 'string') return close();
    const [kind, ...rest] = message;
    if (kind === 'DLMessageVersionExchange' && rest[0] === 'DLVersionsOk' && !ready) {
      ready = true;
      link.write(frame(['DLMessageDeviceReady']));
    } else if (kind === 'DLMessageProcessMessage' && ready && isDict(rest[0]) && rest[0].MessageType === 'ScreenShotRequest') {
      link.write(frame(['DLMessageProcessMessage', { MessageType: 'ScreenShotReply', ScreenShotData: device.wda.screen.png() }]));
    } else close();
  };
  link.on('data', (chunk) => {
    if (closed) return;
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const length = pending.readUInt32BE(0);
      if (length > MAX_FRAME) return close();
      if (pending.length < 4 + length) return;
      const body = pending.subarray(4, 4 + length);
      pending = pending.subarray(4 + length);
      let message: PlistValue;
      try {
        message = decodePlistValue(body);
      } catch {
        return close();
      }
      handle(message);
      if (closed) return;
    }
  });
  link.on('close', () => (closed = true));
  link.write(frame(['DLMessageVersionExchange', VERSION_MAJOR, 0]));
}
