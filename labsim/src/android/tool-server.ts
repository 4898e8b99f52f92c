/**
 * Bridge between the real `/bin/sh` and the in-process device model.
 *
 * Each fake tool (`getprop`, `pm`, ...) is a tiny node script on the device's
 * PATH. It sends its name and argv over a per-device unix socket and relays
 * framed stdout/stderr/exit back. Keeping the state in the simulator process
 * (instead of state files edited by many short-lived processes) avoids races
 * and lets tests inspect e.g. recorded `am start` calls directly.
 *
 * Frames (device -> script): [kind:u8][len:u32 LE][data], kind 1 stdout,
 * 2 stderr, 3 exit (one byte). Request (script -> device): one JSON line.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { ToolIO } from './tool-io';

type ToolHandler = (tool: string, args: string[], io: ToolIO) => Promise<number>;

/** Source of every fake tool script; the tool name is the script's file name. */
function toolScriptSource(nodePath: string): string {
  return `#!${nodePath}
// labsim fake Android tool: forwards argv to the simulated device and relays its output.
'use strict';
const net = require('net');
const tool = require('path').basename(process.argv[1]);
const sock = net.connect(process.env.LABSIM_TOOL_SOCK || '');
let buf = Buffer.alloc(0);
let exited = false;
// A closed pipe (getprop | head -1) must end the tool like SIGPIPE would (status 141).
process.stdout.on('error', () => process.exit(141));
sock.on('connect', () => sock.write(JSON.stringify({ tool, args: process.argv.slice(2) }) + '\\n'));
sock.on('data', (d) => {
  buf = Buffer.concat([buf, d]);
  while (buf.length >= 5 && buf.length >= 5 + buf.readUInt32LE(1)) {
    const kind = buf[0], data = buf.subarray(5, 5 + buf.readUInt32LE(1));
    buf = buf.subarray(5 + data.length);
    if (kind === 1) process.stdout.write(data);
    else if (kind === 2) process.stderr.write(data);
    else if (kind === 3) { exited = true; process.exitCode = data[0]; sock.end(); }
  }
});
sock.on('error', () => { if (!exited) { process.stderr.write(tool + ': device service unavailable\\n'); process.exit(255); } });
sock.on('close', () => { if (!exited) process.exit(255); });
`;
}

export function installToolScripts(dir: string, names: readonly string[]): void {
  fs.mkdirSync(dir, { recursive: true });
  const source = toolScriptSource(process.execPath);
  for (const name of names) {
    const file = path.join(dir, name);
    fs.writeFileSync(file, source, { mode: 0o755 });
    fs.chmodSync(file, 0o755);
  }
}

function frame(kind: number, data: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header[0] = kind;
  header.writeUInt32LE(data.length, 1);
  return Buffer.concat([header, data]);
}

export class ToolServer {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();

  constructor(readonly socketPath: string, private readonly handler: ToolHandler, private readonly mapArg: (arg: string) => string) {}

  async start(): Promise<void> {
    fs.rmSync(this.socketPath, { force: true });
    const server = net.createServer((socket) => this.serve(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.socketPath, () => resolve());
    });
    this.server = server;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    fs.rmSync(this.socketPath, { force: true });
  }

  private serve(socket: net.Socket): void {
    this.sockets.add(socket);
    let request = '';
    let started = false;
    let goneResolve!: () => void;
    const gone = new Promise<void>((r) => (goneResolve = r));
    socket.on('close', () => {
      this.sockets.delete(socket);
      goneResolve();
    });
    socket.on('error', () => undefined);
    socket.on('data', (d) => {
      if (started) return;
      request += d.toString('utf8');
      const nl = request.indexOf('\n');
      if (nl < 0) return;
      started = true;
      let parsed: { tool: string; args: string[] };
      try {
        parsed = JSON.parse(request.slice(0, nl));
      } catch {
        socket.destroy();
        return;
      }
      const send = (kind: number, data: Buffer) => {
        if (!socket.destroyed) socket.write(frame(kind, data));
      };
      const io: ToolIO = {
        out: (data) => send(1, typeof data === 'string' ? Buffer.from(data) : data),
        err: (data) => send(2, Buffer.from(data)),
        gone,
      };
      this.handler(parsed.tool, parsed.args.map(this.mapArg), io)
        .catch((e: Error) => {
          io.err(`Exception occurred while executing '${parsed.args[0] ?? parsed.tool}':\n${e.stack ?? e.message}\n`);
          return 255;
        })
        .then((code) => {
          send(3, Buffer.from([code & 0xff]));
          socket.end();
        });
    });
  }
}
