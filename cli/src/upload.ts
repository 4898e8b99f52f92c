/**
 * `apps upload`: the file is streamed from disk as a multipart body (never held in memory, so a 2 GB IPA costs
 * a few chunks), with a progress bar of bytes and rate on stderr, then the hub's package check is awaited on /Async.
 */
import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ApiClient } from './api-client';
import { CliError, EXIT } from './errors';
import type { Application } from './models';
import { formatBytes, formatElapsed, type Output } from './output';

const PACKAGE_OS: Record<string, 'Android' | 'iOS'> = { '.apk': 'Android', '.ipa': 'iOS', '.zip': 'iOS' };
const ZIP_MAGIC = Buffer.of(0x50, 0x4b, 0x03, 0x04); // PK\x03\x04: a zip archive's local file header

/**
 * The operating system a local package is for, by its extension as the hub types uploads (`.zip`: a zipped
 * simulator `.app`); a file that is not one, or not a zip archive as every package is, is refused before any
 * byte of it is sent.
 */
export function packageOs(file: string): 'Android' | 'iOS' {
  const os = PACKAGE_OS[path.extname(file).toLowerCase()];
  if (!os) throw new CliError(`Cannot upload '${file}': not an .apk or .ipa file (nor a zipped simulator .app).`, EXIT.usage);
  const head = Buffer.alloc(ZIP_MAGIC.length);
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    readSync(fd, head, 0, head.length, 0);
  } catch (err) {
    throw new CliError(`Cannot upload '${file}': ${(err as Error).message}. Give the path of an .apk or .ipa file.`, EXIT.usage);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (!head.equals(ZIP_MAGIC)) {
    throw new CliError(`Cannot upload '${file}': it is not a zip archive, so not an ${path.extname(file).toLowerCase()} package. `
      + 'Check that the build wrote the file completely.', EXIT.usage);
  }
  return os;
}

export async function uploadApplication(api: ApiClient, out: Output, file: string, deadlineMs: number): Promise<Application> {
  let size: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw new Error('not a regular file');
    size = stat.size;
  } catch (err) {
    throw new CliError(`Cannot upload '${file}': ${(err as Error).message}. Give the path of an .apk or .ipa file.`, EXIT.usage);
  }
  packageOs(file);
  const boundary = `devicelab-${randomBytes(12).toString('hex')}`;
  const name = path.basename(file).replace(/["\r\n]/g, '_');
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${name}"\r\n`
    + 'Content-Type: application/octet-stream\r\n\r\n');
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);

  const started = Date.now();
  let sent = 0;
  const show = (force = false) => out.progress(
    progressBar(name, sent, size, Date.now() - started, out.style.tty, process.stderr.columns || 80), force);
  async function* body() {
    yield head;
    show(true);
    for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) {
      sent += (chunk as Buffer).length;
      show();
      yield chunk as Buffer;
    }
    show(true);
    yield tail;
  }
  const stream = Readable.toWeb(Readable.from(body())) as ReadableStream<Uint8Array>;
  const { asyncResponseId } = await api.result<{ asyncResponseId: string }>('POST', '/Application?add', {
    body: stream,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
    timeoutMs: 6 * 3600_000,
    hint: 'Check that the file is a complete, signed .apk or .ipa.',
  });
  out.clearProgress();
  if (out.style.tty) out.note(`uploaded ${formatBytes(size)} in ${formatElapsed(Date.now() - started)}; the hub is checking the package`);
  const app = await api.awaitAsync<Application>(asyncResponseId, '/Application?add', Date.now(), {
    deadlineMs, onPoll: (elapsed) => out.progress(`the hub is checking ${name} (${formatElapsed(elapsed)})`),
    hint: 'Check that the file is a complete, signed .apk or .ipa.',
  });
  out.clearProgress();
  return app;
}

function progressBar(name: string, sent: number, size: number, elapsedMs: number, tty: boolean, columns: number): string {
  const rate = elapsedMs > 0 ? (sent / elapsedMs) * 1000 : 0;
  const fraction = size > 0 ? sent / size : 1;
  const percent = `${Math.floor(fraction * 100)}%`;
  const numbers = `${formatBytes(sent)} / ${formatBytes(size)}  ${formatBytes(rate)}/s`;
  if (!tty) return `uploading ${name}: ${percent} ${numbers}`;
  // Fits the terminal: the bar shrinks first, then the name (the numbers are what the user watches).
  const fixed = ` [] ${percent.padStart(4)} ${numbers}`.length;
  const barWidth = Math.max(10, Math.min(24, columns - 1 - fixed - Math.min(name.length, 24)));
  const room = Math.max(8, columns - 1 - fixed - barWidth);
  const shown = name.length <= room ? name : `${name.slice(0, room - 3)}...`;
  const filled = Math.round(fraction * barWidth);
  return `${shown} [${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}] ${percent.padStart(4)} ${numbers}`;
}
