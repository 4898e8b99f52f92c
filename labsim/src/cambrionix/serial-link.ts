/**
 * The simulated hub's USB serial link: a pseudo-terminal made by socat (`pty,raw,echo=0,link=<path>`) whose
 * other end is a TCP connection to this process, so the gateway opens a real tty with `serialport` exactly as
 * it opens `/dev/serial/by-id/...` on a lab host. Unplug kills socat (the tty vanishes; the host sees EIO on
 * its next write), plug starts it again under the same path.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';

interface SerialLinkHandlers {
  /** A host-side connection is up: bytes from the host arrive at `input`; `write` sends to the host. */
  connected(write: (text: string) => void): (chunk: Buffer) => void;
}

export class SerialLink {
  private server: net.Server | undefined;
  private socat: ChildProcess | undefined;
  private socket: net.Socket | undefined;

  constructor(readonly path: string, private readonly handlers: SerialLinkHandlers) {}

  get plugged(): boolean {
    return this.socat !== undefined;
  }

  async start(): Promise<void> {
    this.server = net.createServer((socket) => {
      this.socket?.destroy();
      this.socket = socket;
      socket.setNoDelay(true);
      const input = this.handlers.connected((text) => {
        if (!socket.destroyed) socket.write(Buffer.from(text, 'latin1'));
      });
      socket.on('data', input);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    await this.plug();
  }

  /** The USB cable goes in: the tty appears at `path`. */
  async plug(): Promise<void> {
    if (this.socat) return;
    const address = this.server?.address() as net.AddressInfo | null;
    if (!address) throw new Error('serial link not started');
    fs.rmSync(this.path, { force: true });
    const socat = spawn('socat', [`pty,raw,echo=0,link=${this.path}`, `tcp:127.0.0.1:${address.port}`], { stdio: 'ignore' });
    this.socat = socat;
    socat.once('exit', () => {
      if (this.socat === socat) this.socat = undefined;
    });
    const deadline = Date.now() + 5_000;
    while (!fs.existsSync(this.path)) {
      if (Date.now() > deadline || this.socat !== socat) throw new Error(`socat did not create ${this.path}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** The USB cable comes out: socat and the tty go away without a word to the host. */
  async unplug(): Promise<void> {
    const socat = this.socat;
    this.socat = undefined;
    this.socket?.destroy();
    this.socket = undefined;
    if (!socat || socat.exitCode !== null) return;
    const exited = new Promise((resolve) => socat.once('exit', resolve));
    socat.kill('SIGKILL');
    await exited;
    fs.rmSync(this.path, { force: true });
  }

  async stop(): Promise<void> {
    await this.unplug();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}
