/**
 * The simulated device's file tree, kept in a host folder that acts as the device's `/`. Every device path is
 * resolved here component by component, symbolic links included (an absolute link target means the device's root,
 * `..` stops at it), so no device path, link or `..` reaches a host file outside the folder. Resolving and the file
 * operation that follows run in one synchronous step, so no other device session can swap a link in between.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const MAX_LINKS = 40;
/** Device folders the shell user (uid 2000, as adbd and its shell run) may write; the rest is read-only to it. */
const WRITABLE = ['/data/local/tmp', '/storage/emulated/0'];

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

  /** `hostPath` for a file the shell user writes; outside its folders an error coded ENOENT, EROFS or EACCES. */
  writableHostPath(devicePath: string, cwd = '/', followLast = true): string {
    const host = this.hostPath(devicePath, cwd, followLast);
    const resolved = this.devicePath(host);
    if (WRITABLE.some((w) => resolved.startsWith(w + '/'))) return host;
    const code = !fs.existsSync(path.dirname(host)) ? 'ENOENT' : /^\/(system|vendor|product|system_ext|odm|apex)?(\/|$)/.test(resolved) ? 'EROFS' : 'EACCES';
    throw Object.assign(new Error(code === 'ENOENT' ? 'No such file or directory' : code === 'EROFS' ? 'Read-only file system' : 'Permission denied'), { code });
  }

  /** The device path of a host file inside the tree. */
  devicePath(hostFile: string): string {
    return '/' + path.relative(this.root, hostFile).split(path.sep).filter(Boolean).join('/');
  }
}
