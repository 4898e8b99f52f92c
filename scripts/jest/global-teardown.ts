/** Drops this run's test databases and stops the embedded PostgreSQL that globalSetup started, if any. */
export default async function globalTeardown(): Promise<void> {
  const stop = (globalThis as { __devicelabStopTestDatabase?: () => Promise<void> }).__devicelabStopTestDatabase;
  if (stop) await stop();
}
