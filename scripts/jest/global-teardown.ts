export default async function globalTeardown(): Promise<void> {
  const stop = (globalThis as { __devicelabStopTestDatabase?: () => Promise<void> }).__devicelabStopTestDatabase;
  if (stop) await stop();
}
