/**
 * An MJPEG stream server as the UiAutomator2 server (device port 7810) and WebDriverAgent (9100) run one: any
 * request gets `multipart/x-mixed-replace; boundary=--BoundaryString` and a JPEG of the screen per frame
 * interval until the client goes away. A client that reads slower than the frames come skips frames instead of
 * buffering them.
 */
import type { Duplex } from 'node:stream';

export interface MjpegSource {
  /** The current picture as JPEG. */
  frame(): Buffer;
  framesPerSecond(): number;
  /** The `Server` header (`UiAutomator2`, `WDA MJPEG Server`). */
  serverName: string;
}

/** How much of a request is read before the stream starts (the request is not otherwise looked at). */
const MAX_REQUEST_HEAD = 16 * 1024;

export function serveMjpeg(socket: Duplex, source: MjpegSource): void {
  let head = '';
  let streaming = false;
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
  socket.on('error', stop);
  socket.on('close', stop);
  socket.on('data', (chunk: Buffer) => {
    if (streaming) return;
    head += chunk.toString('latin1');
    if (head.length > MAX_REQUEST_HEAD) return void socket.destroy();
    if (!head.includes('\r\n\r\n') && !head.includes('\n\n')) return;
    streaming = true;
    socket.write([
      'HTTP/1.1 200 OK', `Server: ${source.serverName}`, 'Connection: close', 'Max-Age: 0', 'Expires: 0',
      'Cache-Control: no-cache, private', 'Pragma: no-cache', 'Content-Type: multipart/x-mixed-replace; boundary=--BoundaryString', '', '',
    ].join('\r\n'));
    const send = () => {
      if (socket.destroyed) return;
      const started = Date.now();
      if (socket.writableLength === 0) {
        const jpeg = source.frame();
        socket.write(`--BoundaryString\r\nContent-type: image/jpg\r\nContent-Length: ${jpeg.length}\r\n\r\n`);
        socket.write(jpeg);
        socket.write('\r\n\r\n');
      }
      const interval = 1000 / Math.max(1, Math.min(60, source.framesPerSecond()));
      timer = setTimeout(send, Math.max(0, interval - (Date.now() - started)));
    };
    send();
  });
}
