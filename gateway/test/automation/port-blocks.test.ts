/** Port blocks per device: fixed while the device is known, one per device, a block with a busy port skipped. */
import net from 'node:net';
import { PortBlocks } from '../../src/automation/port-blocks';

async function listening(port: number): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return server;
}

test('a device keeps its block; devices get distinct blocks; a block with a port in use is skipped; a released block is free again', async () => {
  // Below the ephemeral range (outgoing connections do not take these ports), a window of its own per test process.
  const first = 28000 + (process.pid % 100) * 30;
  // The third port of the first block is in use.
  const busy = await listening(first + 2);
  const blocks = new PortBlocks({ first, last: first + 29 });
  try {
    const a = await blocks.assign('device-a');
    expect(a).toEqual({
      appium: first + 10, systemPort: first + 11, mjpegServerPort: first + 12, chromedriverPort: first + 13, wdaLocalPort: first + 14,
      spare: [first + 15, first + 16, first + 17, first + 18, first + 19],
    });
    expect(await blocks.assign('device-a')).toEqual(a);
    // Two devices at once for the one block left (the range holds three, one of them busy): one gets it.
    const [b, c] = await Promise.all([blocks.assign('device-b'), blocks.assign('device-c')]);
    expect([b?.appium, c?.appium].sort()).toEqual([first + 20, undefined]);
    blocks.release('device-a');
    expect((await blocks.assign('device-d'))?.appium).toBe(first + 10);
  } finally {
    busy.close();
  }
});
