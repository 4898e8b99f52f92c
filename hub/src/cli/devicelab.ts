/**
 * The `devicelab-hub` command line (the hub's operator commands; the client's `devicelab` is the cli/ package).
 * Administrative commands open the records store exactly as the hub does (DATABASE_URL, else the embedded
 * PostgreSQL under DEVICELAB_DATA_DIR; while the hub runs on that data dir they use its server). `serve` is passed in by the composition root, so this file does not depend on the HTTP app.
 */
import path from 'node:path';
import { rotateUserToken, UserNotFoundError } from '../auth/users';
import { InvalidGatewayNameError, registerGateway } from '../gateways/gateway-tokens';
import { DataDirLockedError } from '../store/data-dir-lock';
import { BackupToolError, backupRecords, restoreRecords } from '../store/backup';
import { hubConfigFromEnv } from '../config';
import { openRecordsStore, type RecordsStore, type RecordsStoreConfig } from '../store/open-records-store';

export const USAGE = `Usage: devicelab-hub <command>

Commands:
  serve                      Run the hub (REST API and gateway link).
  token rotate <login>       Give a user a new API token and print it. The old token stops working.
  gateway add <name>         Register a gateway (or give it a new token) and print its token.
  backup <file>              Write all records (users, roles, devices, apps with their binaries, history) to
                             <file>, while the hub runs or not (pg_dump's custom format).
  restore <file>             Replace all records with those of a backup, e.g. into a new DEVICELAB_DATA_DIR or
                             an empty database; stop the hub first. Needs pg_dump/pg_restore on the PATH.
  help                       Show this text.

Environment:
  DATABASE_URL               External PostgreSQL (postgres://user:password@host:port/database).
  DEVICELAB_DATA_DIR         Data directory of the embedded PostgreSQL when DATABASE_URL is unset (default ./data).

To reach a device you retain (adb through the hub), use the client: npx devicelab connect <device>.
`;

interface CliDeps {
  /** Runs the hub until it is stopped; wired by the composition root (hub/src/server.ts). */
  serve(args: string[]): Promise<void>;
  /** The environment the configuration is read from (default: the process's). */
  env?: NodeJS.ProcessEnv;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** For tests: how the records store is opened. */
  openStore?: (config: RecordsStoreConfig) => Promise<RecordsStore>;
}

/** Runs one command; resolves with the process exit code (0 ok, 1 failed, 2 usage error). */
export async function runCli(argv: string[], deps: CliDeps): Promise<number> {
  const stdout = deps.stdout ?? ((text) => process.stdout.write(text));
  const stderr = deps.stderr ?? ((text) => process.stderr.write(text));
  const [command, ...args] = argv;

  const withStore = async (action: (store: RecordsStore) => Promise<string>, attachToRunningHub = true): Promise<number> => {
    const hub = hubConfigFromEnv(deps.env);
    const config = { databaseUrl: hub.databaseUrl, dataDir: hub.dataDir, embeddedPort: hub.embeddedPostgresPort, attachToRunningHub };
    let store: RecordsStore | undefined;
    try {
      store = await (deps.openStore ?? openRecordsStore)(config);
      stdout(`${await action(store)}\n`);
      return 0;
    } catch (err) {
      stderr(`devicelab-hub: ${describeFailure(err)}\n`);
      return 1;
    } finally {
      await store?.stop();
    }
  };

  switch (command) {
    case 'serve':
      await deps.serve(args);
      return 0;
    case 'token':
      if (args[0] === 'rotate' && args.length === 2) return withStore(({ db }) => rotateUserToken(db, args[1]));
      break;
    case 'gateway':
      if (args[0] === 'add' && args.length === 2) return withStore(({ db }) => registerGateway(db, args[1]));
      break;
    case 'backup':
      if (args.length === 1) return withStore(async ({ url }) => (await backupRecords(url, path.resolve(args[0])), `backup written to ${args[0]}`));
      break;
    case 'restore':
      // Not beside a running hub: it would keep serving what it had cached and write over the restored records.
      if (args.length === 1) return withStore(async ({ url }) => (await restoreRecords(url, path.resolve(args[0])), `restored from ${args[0]}`), false);
      break;
    case 'help':
    case '--help':
    case '-h':
      stdout(USAGE);
      return 0;
  }
  stderr(command === undefined ? USAGE : `devicelab: unknown or incomplete command: ${argv.join(' ')}\n\n${USAGE}`);
  return 2;
}

/** Expected failures as one line; anything else with its message (the stack would only confuse operators). */
function describeFailure(err: unknown): string {
  if (err instanceof UserNotFoundError || err instanceof InvalidGatewayNameError || err instanceof DataDirLockedError || err instanceof BackupToolError) {
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
