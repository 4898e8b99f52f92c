/**
 * Multipart upload (wire-decisions rule 6): the first part that carries a filename, whatever its field name (the
 * C# client names it with a random GUID, curl uses `upload`), streamed to a temporary directory with a size limit.
 * Type by extension: `.apk` (Android) or `.ipa` (iOS); anything else fails with the vendor's exact text
 * (`unknownFileType`).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
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
  operatingSystem: DeviceOperatingSystem;
}

export function createUploadMiddleware(options: { tempDir: string; limitBytes: number }): RequestHandler {
  const upload = multer({
    storage: multer.diskStorage({
      destination: (_req, _file, cb) => {
        fs.mkdir(options.tempDir, { recursive: true }).then(() => cb(null, options.tempDir), (err) => cb(err, ''));
      },
    }),
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
  const files = (Array.isArray(req.files) ? req.files : []) as Express.Multer.File[];
  const chosen = files.find((f) => f.originalname);
  await Promise.all(files.filter((f) => f !== chosen).map((f) => fs.rm(f.path, { force: true })));
  if (!chosen) throw new ApiFailure('No file was uploaded.');
  if (chosen.originalname.includes('\u0000')) {
    await fs.rm(chosen.path, { force: true });
    throw new ApiFailure('The file name must not contain a NUL character.');
  }
  const operatingSystem = fileTypeOf(chosen.originalname);
  if (!operatingSystem) {
    await fs.rm(chosen.path, { force: true });
    throw new ApiFailure(unknownFileType(chosen.originalname));
  }
  return { path: chosen.path, originalName: path.basename(chosen.originalname), size: chosen.size, operatingSystem };
}

/** Removes every uploaded temporary file of a request (when a request fails before using them). */
export async function discardUploads(req: Request): Promise<void> {
  const files = (Array.isArray(req.files) ? req.files : []) as Express.Multer.File[];
  await Promise.all(files.map((f) => fs.rm(f.path, { force: true })));
}

/** The vendor server's text (wire-contract 5, exact): the .NET ArgumentException form, then the extension. */
export const unknownFileType = (fileName: string): string =>
  `Unknown file type.\nParameter name: filename\n${path.extname(fileName)}`;

export function fileTypeOf(fileName: string): DeviceOperatingSystem | undefined {
  const ext = path.extname(fileName).toLowerCase();
  if (ext === '.apk') return 'Android';
  if (ext === '.ipa') return 'iOS';
  return undefined;
}
