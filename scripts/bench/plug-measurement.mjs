// Plugging a simulated device and watching the REST API until the hub reports it, as a user would see it.
import { performance } from 'node:perf_hooks';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Device Guids by serial number, learnt from the first listing that shows the device. */
const guids = new Map();

/**
 * The device's availability as GET /Device shows it, or undefined while the hub does not know it. The `id`
 * filter takes the Guid, so a device is found by its serial number in the whole list until its Guid is known.
 */
async function availabilityOf(lab, serial) {
  const guid = guids.get(serial);
  const { status, body } = await lab.get(guid ? `/Device?id=${guid}` : '/Device');
  if (status !== 200 || !Array.isArray(body)) throw new Error(`GET /Device answered HTTP ${status}: ${JSON.stringify(body)}`);
  const device = body.find((d) => d.serialNumber === serial || d.vendorUniqueIdentifier === serial);
  if (device) guids.set(serial, device.id);
  return device?.availability;
}

/** Polls GET /Device every `pollMs` until the device shows `availability`. */
export async function waitForAvailability(lab, serial, availability, pollMs, timeoutMs = 30_000) {
  const deadline = performance.now() + timeoutMs;
  while ((await availabilityOf(lab, serial)) !== availability) {
    if (performance.now() > deadline) throw new Error(`${serial} not ${availability} after ${timeoutMs} ms`);
    await sleep(pollMs);
  }
}

/** Plugs the device (`adb connect`; an iOS device by its UDID: usbmuxd Attached) and returns the milliseconds until GET /Device lists it Online. */
export async function measurePlugToOnline(lab, serial, pollMs) {
  const started = performance.now();
  const plugged = lab.world.plug(serial);
  await waitForAvailability(lab, serial, 'Online', pollMs);
  const elapsed = performance.now() - started;
  await plugged; // surfaces a failed `adb connect`
  return elapsed;
}
