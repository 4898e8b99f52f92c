// Placeholder until the test-database setup lands (hub/src/store); replaced by the real one.
export default async function globalSetup(): Promise<void> {}
