/**
 * Multipart upload (wire rule 6, docs/wire-rules.md): the first part that carries a filename, whatever its field name
 * (the C# client names it with a random GUID, curl uses `upload`), streamed to a temporary directory with a size
 * limit and hashed (SHA-256) on the way, so a binary the hub already stores is never written a second time. A part
 * that does not arrive whole (client abort, size limit) leaves no file behind. Type by extension: `.apk` (Android),
 * `.ipa` or `.zip` (iOS; a zip holds a simulator `.app` bundle); anything else fails with the vendor's exact text
 * (`unknownFileType`).
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import multer from 'multer';
import type { Request, RequestHandler, Response } from 'express';
import { ApiFailure, type DeviceOperatingSystem } from '@devicelab/shared';
import { prettyRequested } from './params';
import { writeFailure } from './respond';

export interface UploadedFile {
  /** Temporary file on disk; the caller removes it when done. */
  path: string;
  /** File name as the client sent it. */
  originalName: string;
  size: number;
  /** SHA-256 (hex) of the bytes, computed while they were received. */
  sha256: string;
  operatingSystem: DeviceOperatingSystem;
}

/** The longest file name an upload keeps (what file systems allow), in characters. */
export const MAX_FILE_NAME_LENGTH = 255;
const FILE_NAME_TOO_LONG = `The file name must not be longer than ${MAX_FILE_NAME_LENGTH} characters.`;

/** Temporary upload files are named `<uuid>.upload` in the upload directory (what `removeStaleUploads` removes). */
const UPLOAD_SUFFIX = '.upload';

type HashedFile = Express.Multer.File & { sha256: string };

/** multer storage that writes each part to `<tempDir>/<uuid>.upload` and hashes it while it streams. */
function hashingDiskStorage(tempDir: string): multer.StorageEngine {
  return {
    _handleFile(_req, file, cb) {
      const target = path.join(tempDir, `${randomUUID()}${UPLOAD_SUFFIX}`);
      const hash = createHash('sha256');
      let size = 0;
      const hashing = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          hash.update(chunk);
          size += chunk.length;
          callback(null, chunk);
        },
      });
      fs.mkdir(tempDir, { recursive: true })
        .then(() => pipeline(file.stream, hashing, createWriteStream(target)))
        .then(
          () => cb(null, { path: target, size, sha256: hash.digest('hex') } as Partial<HashedFile>),
          (err: unknown) => fs.rm(target, { force: true }).finally(() => cb(err as Error)),
        );
    },
    _removeFile(_req, file, cb) {
      fs.rm(file.path, { force: true }).then(() => cb(null), (err: Error) => cb(err));
    },
  };
}

/** At hub start: uploads a previous process was receiving or parsing when it was killed. */
export async function removeStaleUploads(tempDir: string): Promise<number> {
  const names = await fs.readdir(tempDir).catch(() => [] as string[]);
  const stale = names.filter((name) => name.endsWith(UPLOAD_SUFFIX));
  await Promise.all(stale.map((name) => fs.rm(path.join(tempDir, name), { force: true })));
  return stale.length;
}

export function createUploadMiddleware(options: { tempDir: string; limitBytes: number }): RequestHandler {
  const upload = multer({
    storage: hashingDiskStorage(options.tempDir),
    // Browsers, curl and fetch send a file name's UTF-8 bytes as they are; read as latin1 "é" became "Ã©".
    defParamCharset: 'utf8',
    limits: { fileSize: options.limitBytes, files: 4, fields: 100 },
  }).any();
  return (req: Request, res: Response, next) => {
    upload(req, res, (err: unknown) => {
      if (!err) return next();
      if (err instanceof multer.MulterError) {
        const message = err.code === 'LIMIT_FILE_SIZE'
          ? `The file is larger than the upload limit of ${options.limitBytes} bytes.`
          : `Invalid upload: ${err.message}.`;
        return writeFailure(res, 200, message, prettyRequested(req));
      }
      // Malformed multipart (busboy) errors are the client's fault too.
      const msg = (err as Error).message ?? String(err);
      return writeFailure(res, 200, `Invalid upload: ${msg}`, prettyRequested(req));
    });
  };
}

/** Picks the uploaded file, removes any other parts, and checks the type. Throws ApiFailure. */
export async function takeUploadedFile(req: Request): Promise<UploadedFile> {
  const files = (Array.isArray(req.files) ? req.files : []) as HashedFile[];
  const chosen = files.find((f) => f.originalname);
  await Promise.all(files.filter((f) => f !== chosen).map((f) => fs.rm(f.path, { force: true })));
  if (!chosen) throw new ApiFailure('No file was uploaded.');
  if (chosen.originalname.includes('\u0000')) {
    await fs.rm(chosen.path, { force: true });
    throw new ApiFailure('The file name must not contain a NUL character.');
  }
  if ([...path.basename(chosen.originalname)].length > MAX_FILE_NAME_LENGTH) {
    await fs.rm(chosen.path, { force: true });
    throw new ApiFailure(FILE_NAME_TOO_LONG);
  }
  const operatingSystem = fileTypeOf(chosen.originalname);
  if (!operatingSystem) {
    await fs.rm(chosen.path, { force: true });
    throw new ApiFailure(unknownFileType(chosen.originalname));
  }
  return {
    path: chosen.path, originalName: path.basename(chosen.originalname), size: chosen.size, sha256: chosen.sha256,
    operatingSystem,
  };
}

/** Removes every uploaded temporary file of a request (when a request fails before using them). */
export async function discardUploads(req: Request): Promise<void> {
  const files = (Array.isArray(req.files) ? req.files : []) as Express.Multer.File[];
  await Promise.all(files.map((f) => fs.rm(f.path, { force: true })));
}

/** The vendor server's text, exactly (wire rule 29): the .NET ArgumentException form, then the extension. */
const unknownFileType = (fileName: string): string =>
  `Unknown file type.\nParameter name: filename\n${path.extname(fileName)}`;

function fileTypeOf(fileName: string): DeviceOperatingSystem | undefined {
  const ext = path.extname(fileName).toLowerCase();
  if (ext === '.apk') return 'Android';
  if (ext === '.ipa') return 'iOS';
  if (ext === '.zip') return 'iOS'; // a zipped .app bundle built for the iOS Simulator
  return undefined;
}
