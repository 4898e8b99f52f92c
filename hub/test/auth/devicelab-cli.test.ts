/** `devicelab-hub token rotate` and `devicelab-hub gateway add`, against an external database and the embedded one. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { promisify } from 'node:util';
import { API_TOKEN_PATTERN } from '../../src/auth/api-tokens';
import { ensureBuiltInRolesAndAdmin, findUserByCredentials } from '../../src/auth/users';
import { runCli, USAGE } from '../../src/cli/devicelab';
import { authenticateGateway } from '../../src/gateways/gateway-tokens';
import { createDatabase } from '../../src/store/database';
import { withDatabaseName } from '../../src/store/database-admin';
import { EMBEDDED_DATABASE_NAME } from '../../src/store/open-records-store';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const support = path.join(__dirname, '..', 'support');
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  await ensureBuiltInRolesAndAdmin(t.db);
});
afterAll(() => t.drop());

async function cli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const serve = jest.fn(async () => undefined);
  const code = await runCli(argv, { serve, env: { DATABASE_URL: t.url }, stdout: (s) => out.push(s), stderr: (s) => err.push(s) });
  return { code, stdout: out.join(''), stderr: err.join(''), serve };
}

describe('devicelab-hub CLI (DATABASE_URL)', () => {
  it('gateway add prints a token the link accepts', async () => {
    const { code, stdout } = await cli(['gateway', 'add', 'bench-1']);
    expect(code).toBe(0);
    const token = stdout.trim();
    expect(token).toMatch(API_TOKEN_PATTERN);
    expect(await authenticateGateway(t.db, 'bench-1', token)).toBeDefined();
  });

  it('token rotate prints a new API token for the user', async () => {
    const { code, stdout } = await cli(['token', 'rotate', 'admin']);
    expect(code).toBe(0);
    expect(await findUserByCredentials(t.db, 'admin', stdout.trim())).toMatchObject({ login: 'admin' });
  });

  it('reports failures and usage errors with exit codes', async () => {
    await expect(cli(['token', 'rotate', 'nobody@example.com'])).resolves.toMatchObject({
      code: 1,
      stderr: "devicelab-hub: No user with login 'nobody@example.com'.\n",
    });
    await expect(cli(['gateway', 'add', 'bad name'])).resolves.toMatchObject({ code: 1, stderr: expect.stringMatching(/Invalid gateway name/) });
    await expect(cli(['gateway', 'remove', 'x'])).resolves.toMatchObject({ code: 2, stderr: expect.stringContaining(USAGE) });
    await expect(cli([])).resolves.toMatchObject({ code: 2, stderr: USAGE });
    await expect(cli(['help'])).resolves.toMatchObject({ code: 0, stdout: USAGE });
  });

  it('serve hands over to the wired serve function', async () => {
    const { code, serve } = await cli(['serve', '--flag']);
    expect(code).toBe(0);
    expect(serve).toHaveBeenCalledWith(['--flag']);
  });
});

describe('devicelab-hub CLI (embedded PostgreSQL under DEVICELAB_DATA_DIR)', () => {
  let dataDir: string;
  let holder: ChildProcess | undefined;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-cli-test-'));
  });
  afterAll(async () => {
    if (holder && holder.exitCode === null) holder.kill('SIGTERM');
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const run = (args: string[]) =>
    promisify(execFile)(process.execPath, ['-r', path.join(support, 'ts-register.cjs'), path.join(support, 'cli-runner.ts'), ...args], {
      env: { ...process.env, DATABASE_URL: '', DEVICELAB_DATA_DIR: dataDir },
    });

  it('starts its own server when none runs, and uses the running one when the hub holds the data dir', async () => {
    const alone = await run(['gateway', 'add', 'embedded-1']);
    const firstToken = alone.stdout.trim();
    expect(firstToken).toMatch(API_TOKEN_PATTERN);

    holder = spawn(process.execPath, ['-r', path.join(support, 'ts-register.cjs'), path.join(support, 'embedded-postgres-holder.ts'), dataDir], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const report = await new Promise<{ url: string }>((resolve) => {
      readline.createInterface({ input: holder!.stdout! }).once('line', (line) => resolve(JSON.parse(line) as { url: string }));
    });
    const attached = await run(['gateway', 'add', 'embedded-2']);
    const db = createDatabase(withDatabaseName(report.url, EMBEDDED_DATABASE_NAME));
    try {
      expect(await authenticateGateway(db, 'embedded-1', firstToken)).toBeDefined();
      expect(await authenticateGateway(db, 'embedded-2', attached.stdout.trim())).toBeDefined();
    } finally {
      await db.destroy();
    }
    const exited = new Promise((resolve) => holder!.once('exit', resolve));
    holder.stdin!.write('stop\n');
    await exited;
  });
});
