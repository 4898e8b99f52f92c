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
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { prettyRequested, requestParams, type RequestParams } from './params';
import { writeApiFailure, writeFailure } from './respond';

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

/** Text fields beside the file: none is needed (the operation is in the query), a few short ones are tolerated. */
export const UPLOAD_FIELD_LIMITS = { fields: 16, fieldSize: 4096 } as const;

export interface UploadOptions {
  tempDir: string;
  limitBytes: number;
  /**
   * Decides from the query and the caller, before a byte of the body is read, whether this request's file is
   * taken (true) or its body left unread (false); an ApiFailure refuses the request unread.
   */
  takesFile(params: RequestParams, user: AuthenticatedUser): boolean;
}

/**
 * Receives the one file part of a multipart request (see the top of this file), once `takesFile` admitted it.
 * A body this middleware does not read (refused, or not wanted) is never drained: the answer closes the
 * connection, so a client cannot keep it busy by sending the rest slowly.
 */
export function createUploadMiddleware(options: UploadOptions): RequestHandler {
  const upload = multer({
    storage: hashingDiskStorage(options.tempDir),
    // Browsers, curl and fetch send a file name's UTF-8 bytes as they are; read as latin1 "é" became "Ã©".
    defParamCharset: 'utf8',
    limits: { fileSize: options.limitBytes, files: 1, ...UPLOAD_FIELD_LIMITS, parts: UPLOAD_FIELD_LIMITS.fields + 1 },
  }).any();
  return (req: Request, res: Response, next) => {
    const multipart = req.is('multipart/form-data') === 'multipart/form-data';
    let takesFile: boolean;
    try {
      takesFile = options.takesFile(requestParams(req), (req as unknown as { user: AuthenticatedUser }).user);
    } catch (err) {
      if (!(err instanceof ApiFailure)) return next(err);
      if (multipart) res.set('Connection', 'close');
      return writeApiFailure(res, err, prettyRequested(req));
    }
    if (!multipart) return next();
    if (!takesFile) {
      res.set('Connection', 'close');
      return next();
    }
    upload(req, res, (err: unknown) => {
      if (!err) return next();
      if (res.headersSent) return undefined; // answered already (a body too slow: request-deadlines.ts)
      res.set('Connection', 'close'); // the rest of the body stays unread
      if (err instanceof multer.MulterError) {
        const message = err.code === 'LIMIT_FILE_SIZE'
          ? `The file is larger than the upload limit of ${options.limitBytes} bytes.`
          : err.code === 'LIMIT_FILE_COUNT' ? 'Invalid upload: send one file per request.'
            : err.code === 'LIMIT_FIELD_VALUE' ? `Invalid upload: a text field is longer than ${UPLOAD_FIELD_LIMITS.fieldSize} bytes.`
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
