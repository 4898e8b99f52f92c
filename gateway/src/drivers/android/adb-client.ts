/** The one place the gateway connects to the adb server (driver, battery reader, USB locations share the rule). */
import Adb from '@devicefarmer/adbkit';
import type { Client } from '@devicefarmer/adbkit';

export interface AdbServerOptions {
  /** adb server port (the gateway's `ANDROID_ADB_SERVER_PORT`); default 5037, adb's own. */
  adbPort?: number;
  adbHost?: string;
  /** adb binary used to start the server when it is not running. */
  adbBin?: string;
}

export function createAdbClient(options: AdbServerOptions): Client {
  const port = options.adbPort ?? 5037;
  return Adb.createClient({ port, host: options.adbHost, bin: options.adbBin });
}
