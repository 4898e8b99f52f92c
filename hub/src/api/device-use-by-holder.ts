/**
 * Any API call about a device by its holder is use of it (it keeps the retain from being released as idle): a
 * request naming a device (`id` / `deviceId` on a /Device path, `deviceId` elsewhere) notes use for the caller,
 * which counts only if the caller holds that device. Noted when the answer is written, coalesced per device.
 */
import type { RequestHandler } from 'express';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { DeviceUseNotes } from '../domain/device-use';
import { requestParams } from '../http/params';

export function deviceUseByHolder(uses: DeviceUseNotes): RequestHandler {
  return (req, res, next) => {
    res.once('finish', () => {
      const user = (req as unknown as { user?: AuthenticatedUser }).user;
      if (!user) return;
      try {
        const params = requestParams(req);
        // A retain records its own start of use; after a release there is no lease to keep alive.
        if (/^(retain|release)$/i.test(params.string('action') ?? '')) return;
        const identifier = /^\/device(\/|$)/i.test(req.path) ? params.stringOf('id', 'deviceId') : params.string('deviceId');
        if (identifier && identifier.length <= 200) uses.note(identifier.trim(), user.id);
      } catch {
        // A parameter that cannot be read names no device.
      }
    });
    next();
  };
}
