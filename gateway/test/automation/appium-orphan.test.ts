/**
 * No Appium outlives its gateway, even one killed without a stop: a process standing in for the gateway starts an
 * Appium server the way the gateway does (appium-child.ts, built), is killed with SIGKILL, and the server goes
 * (Appium ends once the pipe of its output is closed; the child's watch of its parent ends its group as well).
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { statusReady } from '../../src/automation/appium-server';
import { GATEWAY_PACKAGE_DIR } from '../../src/automation/automation-servers';

jest.setTimeout(120_000);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until(probe: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('an Appium server ends when its gateway is killed with SIGKILL', async () => {
  const port = await freePort();
  const child = path.join(GATEWAY_PACKAGE_DIR, 'dist', 'automation', 'appium-child.js');
  const appiumDir = path.join(GATEWAY_PACKAGE_DIR, 'node_modules', 'appium');
  const script = `
    const { spawnAppium } = require(${JSON.stringify(child)});
    const server = spawnAppium(${JSON.stringify(appiumDir)}, ['server', '--address', '127.0.0.1', '--port', '${port}', '--use-drivers', 'uiautomator2'],
      { APPIUM_HOME: ${JSON.stringify(GATEWAY_PACKAGE_DIR)} });
    server.stdout.resume();
    server.stderr.resume();
    process.stdout.write(server.pid + '\\n');
    setInterval(() => undefined, 1000);
  `;
  const gateway = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const appiumPid = await new Promise<number>((resolve) => gateway.stdout.once('data', (data: Buffer) => resolve(Number(data.toString().trim()))));
  try {
    await until(() => statusReady(port), 90_000, 'the Appium server ready');
    gateway.kill('SIGKILL');
    await until(() => !alive(appiumPid), 15_000, 'the Appium server gone after its gateway was killed');
    expect(await statusReady(port)).toBe(false);
  } finally {
    gateway.kill('SIGKILL');
    try {
      process.kill(-appiumPid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});
