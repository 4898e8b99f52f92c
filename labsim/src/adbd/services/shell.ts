/**
 * `shell:` (v1) and `shell,v2,...:` services.
 *
 * v1: raw bytes both ways, stdout and stderr merged, no exit code; the
 * stream closes when the process ends (adbkit only uses this variant).
 * v2: frames of [id:u8][len:u32 LE][data]; host sends stdin (0) and
 * close-stdin (4); device sends stdout (1), stderr (2), exit (3, one byte).
 */
import type { ChildProcess } from 'node:child_process';
import type { AdbStream } from '../stream';
import type { DevicePort } from '../device-port';

const ID_STDIN = 0;
const ID_STDOUT = 1;
const ID_STDERR = 2;
const ID_EXIT = 3;
const ID_CLOSE_STDIN = 4;
const ID_WINDOW_SIZE = 5;

function encodeShellFrame(id: number, data: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt8(id, 0);
  header.writeUInt32LE(data.length, 1);
  return Buffer.concat([header, data]);
}

/** Streaming decoder for host -> device shell v2 frames. */
class ShellFrameDecoder {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Array<{ id: number; data: Buffer }> {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const frames: Array<{ id: number; data: Buffer }> = [];
    while (this.buf.length >= 5) {
      const len = this.buf.readUInt32LE(1);
      if (this.buf.length < 5 + len) break;
      frames.push({ id: this.buf[0], data: this.buf.subarray(5, 5 + len) });
      this.buf = this.buf.subarray(5 + len);
    }
    return frames;
  }
}

/** Exit status as a shell reports it: signals become 128 + signal number. */
function exitStatus(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code & 0xff;
  const signals: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15, SIGPIPE: 13 };
  return 128 + (signal ? signals[signal] ?? 1 : 1);
}

/** Kills the whole process group: `sh -c 'while ..; do sleep 1; done'` must not leave `sleep` behind. */
export function killTree(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/** Resolves when the host closes the stream (or the transport dies). */
export function streamGone(stream: AdbStream): Promise<void> {
  return stream.closed ? Promise.resolve() : new Promise((resolve) => stream.once('close', () => resolve()));
}

/** Runs the command inside the simulator when it can; false when it needs a real shell. */
function startInProcess(stream: AdbStream, device: DevicePort, command: string, v2: boolean): boolean {
  const run = device.runShellInProcess(command, {
    out: (d) => stream.write(v2 ? encodeShellFrame(ID_STDOUT, d) : d),
    err: (d) => stream.write(v2 ? encodeShellFrame(ID_STDERR, d) : d),
    gone: streamGone(stream),
  });
  if (!run) return false;
  run.then(
    (status) => stream.end(v2 ? encodeShellFrame(ID_EXIT, Buffer.from([status & 0xff])) : undefined),
    (e: Error) => stream.end(v2 ? Buffer.concat([encodeShellFrame(ID_STDERR, Buffer.from(`sh: ${e.message}\n`)), encodeShellFrame(ID_EXIT, Buffer.from([255]))]) : `sh: ${e.message}\n`),
  );
  return true;
}

export function startShellService(stream: AdbStream, device: DevicePort, command: string, v2: boolean): void {
  if (command && startInProcess(stream, device, command, v2)) return;
  const child = device.spawnShell(command);
  child.stdin?.on('error', () => undefined); // EPIPE when the command ignores stdin
  stream.on('close', () => killTree(child));

  if (!v2) {
    child.stdout?.on('data', (d: Buffer) => stream.write(d));
    child.stderr?.on('data', (d: Buffer) => stream.write(d));
    stream.on('data', (d: Buffer) => child.stdin?.write(d));
    child.on('close', () => stream.end());
    child.on('error', () => stream.end());
    return;
  }

  const decoder = new ShellFrameDecoder();
  stream.on('data', (chunk: Buffer) => {
    for (const frame of decoder.push(chunk)) {
      if (frame.id === ID_STDIN) child.stdin?.write(frame.data);
      else if (frame.id === ID_CLOSE_STDIN) child.stdin?.end();
      // ID_WINDOW_SIZE: no PTY is simulated, so there is nothing to resize.
    }
  });
  child.stdout?.on('data', (d: Buffer) => stream.write(encodeShellFrame(ID_STDOUT, d)));
  child.stderr?.on('data', (d: Buffer) => stream.write(encodeShellFrame(ID_STDERR, d)));
  child.on('close', (code, signal) => {
    stream.end(encodeShellFrame(ID_EXIT, Buffer.from([exitStatus(code, signal)])));
  });
  child.on('error', () => stream.end(encodeShellFrame(ID_EXIT, Buffer.from([127]))));
}
