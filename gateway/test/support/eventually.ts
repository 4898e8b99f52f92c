/** Polls `probe` until it returns a truthy value (which it resolves with), or fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${probe.toString()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
