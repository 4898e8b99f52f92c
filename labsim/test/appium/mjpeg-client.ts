/** Reads an MJPEG stream over HTTP as Appium's mjpeg consumer does: the response head and the first JPEG frames. */
import * as net from 'node:net';

export async function readMjpegFrames(port: number, count: number, timeoutMs = 30_000): Promise<{ head: string; frames: Buffer[] }> {
  const socket = net.connect(port, '127.0.0.1');
  let data = Buffer.alloc(0);
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${count} MJPEG frames within ${timeoutMs} ms`)), timeoutMs);
      socket.once('error', reject);
      socket.once('connect', () => socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n'));
      socket.on('data', (chunk: Buffer) => {
        data = Buffer.concat([data, chunk]);
        const text = data.toString('latin1');
        const end = text.indexOf('\r\n\r\n');
        if (end < 0) return;
        const frames: Buffer[] = [];
        let at = end + 4;
        for (;;) {
          const part = /--BoundaryString\r\nContent-type: image\/jpg\r\nContent-Length: (\d+)\r\n\r\n/.exec(text.slice(at));
          if (!part) break;
          const start = at + part.index + part[0].length;
          const length = Number(part[1]);
          if (data.length < start + length + 4) break;
          frames.push(data.subarray(start, start + length));
          at = start + length + 4;
        }
        if (frames.length >= count) {
          clearTimeout(timer);
          resolve({ head: text.slice(0, end), frames });
        }
      });
    });
  } finally {
    socket.destroy();
  }
}
