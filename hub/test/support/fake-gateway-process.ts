/**
 * A fake gateway in its own process (`node -r ./ts-register.cjs fake-gateway-process.ts <port> <name> <token>
 * <vui>...`): connects, reports the given devices Ready, prints `ready` once Welcome arrived, then keeps
 * heartbeating until killed. Tests SIGKILL it to drop the stream the way a crashed gateway host does.
 */
import { deviceState, FakeGateway } from './fake-gateway';

async function main(): Promise<void> {
  const [port, name, token, ...devices] = process.argv.slice(2);
  const gateway = await FakeGateway.connect({ port: Number(port), name, token });
  gateway.snapshot(devices.map((vui) => deviceState(vui)));
  process.stdout.write('ready\n');
  await gateway.closed;
  process.exit(1);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
