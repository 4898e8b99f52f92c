/**
 * The simulated device's file tree, kept in a host folder that acts as the device's `/`. Every device path is
 * resolved here component by component, symbolic links included (an absolute link target means the device's root,
 * `..` stops at it), so no device path, link or `..` reaches a host file outside the folder. Resolving and the file
 * operation that follows run in one synchronous step, so no other device session can swap a link in between.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const MAX_LINKS = 40;

export class DeviceFileError extends Error {
  constructor(readonly code: 'ENOENT' | 'ELOOP') {
    super(code === 'ELOOP' ? 'Too many symbolic links encountered' : 'No such file or directory');
  }
}

/** `/a/b` for `b` relative to `/a`; `..` never climbs above `/`. */
export function absoluteDevicePath(devicePath: string, cwd = '/'): string {
  return path.posix.normalize(path.posix.join(devicePath.startsWith('/') ? '/' : cwd, devicePath));
}

export class DeviceFs {
  constructor(readonly root: string) {}

  /**
   * The host file of a device path. With `followLast` false a link at the end is itself the answer (for `rm`,
   * `ls -l`, creating a link).
   */
  hostPath(devicePath: string, cwd = '/', followLast = true): string {
    const pending = (devicePath.startsWith('/') ? devicePath : `${cwd}/${devicePath}`).split('/').filter(Boolean);
    const resolved: string[] = [];
    let links = 0;
    while (pending.length > 0) {
      const part = pending.shift()!;
      if (part === '.') continue;
      if (part === '..') {
        resolved.pop();
        continue;
      }
      const host = path.join(this.root, ...resolved, part);
      if (pending.length > 0 || followLast) {
        const st = fs.lstatSync(host, { throwIfNoEntry: false });
        if (st?.isSymbolicLink()) {
          if (++links > MAX_LINKS) throw new DeviceFileError('ELOOP');
          const target = fs.readlinkSync(host);
          if (target.startsWith('/')) resolved.length = 0;
          pending.unshift(...target.split('/').filter(Boolean));
          continue;
        }
      }
      resolved.push(part);
    }
    return path.join(this.root, ...resolved);
  }

  /** The device path of a host file inside the tree. */
  devicePath(hostFile: string): string {
    return '/' + path.relative(this.root, hostFile).split(path.sep).filter(Boolean).join('/');
  }
}
