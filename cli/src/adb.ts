/** The few adb calls `run` and `connect --adb` make on the user's own adb (ADB, else adb on PATH). */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ApiClient } from './api-client';
import { adbBinary, adbPublicKeyFile } from './config';
import { CliError, EXIT } from './errors';
import { currentUser } from './users';

function adb(args: string[], timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(adbBinary(), args, { timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new CliError(`adb is not installed here (${adbBinary()} not found). Install Android platform-tools, set ADB to its path, `
          + 'or run without adb (`run --no-adb`, `connect` without --adb).', EXIT.usage));
        return;
      }
      if (err) reject(new CliError(`adb ${args.join(' ')} failed: ${(stderr || stdout || err.message).trim()}`, EXIT.apiFailure));
      else resolve(`${stdout}${stderr}`);
    });
  });
}

/**
 * `adb connect host:port`, then waits until `adb devices` lists it as a usable device (adb answers exit 0 even when
 * it failed, and may report "failed to authenticate" on a first try it then completes).
 */
export async function adbConnect(address: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let answer = await adb(['connect', address]);
  let state = '';
  for (let attempt = 1; Date.now() < deadline; attempt++) {
    const listed = (await adb(['devices'])).split('\n').find((line) => line.startsWith(`${address}\t`));
    state = listed?.split('\t')[1]?.trim() ?? '';
    if (state === 'device') return;
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (!listed && attempt % 4 === 0) answer = await adb(['connect', address]);
  }
  throw new CliError(`adb could not connect through the tunnel to ${address} (${state || answer.trim()}). Check that the device is `
    + 'online and retained by you, and that your adb key is the one in ~/.android/adbkey.pub.', EXIT.apiFailure);
}

export async function adbDisconnect(address: string): Promise<void> {
  await adb(['disconnect', address]).catch(() => undefined);
}

/**
 * A device's adb endpoint lets in only its retainer's adb keys: registers this machine's key (the one the local
 * adb server signs with, created by `adb start-server` when missing) with the hub, once.
 */
export async function registerAdbKey(api: ApiClient): Promise<void> {
  await adb(['start-server']);
  const file = adbPublicKeyFile();
  let key: string;
  try {
    key = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new CliError(`Cannot read your adb public key ${file} (${(err as Error).message}). Run \`adb start-server\` once, `
      + 'or set ANDROID_USER_HOME to the folder that holds adbkey.pub.', EXIT.usage);
  }
  const me = await currentUser(api);
  try {
    await api.result('POST', '/User', {
      params: { action: 'addAdbKey', id: me.id }, body: new URLSearchParams({ key }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      hint: `The key in ${file} must be an adb public key; registering it needs the User modify self entitlement.`,
    });
  } catch (err) {
    if (err instanceof CliError && err.failureCode === 'ADB_KEY_EXISTS') return;
    throw err;
  }
}
