/** The few adb calls `run` and `connect --adb` make on the user's own adb (ADB, else adb on PATH). */
import { execFile } from 'node:child_process';
import { adbBinary } from './config';
import { CliError, EXIT } from './errors';

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

/** `adb connect host:port`, then waits until adb reports the device online; adb answers exit 0 even when it failed. */
export async function adbConnect(address: string): Promise<void> {
  const answer = await adb(['connect', address]);
  if (!/connected to/i.test(answer)) {
    throw new CliError(`adb could not connect through the tunnel (${answer.trim()}). Check that the device is online and retained by you.`, EXIT.apiFailure);
  }
  await adb(['-s', address, 'wait-for-device'], 60_000);
}

export async function adbDisconnect(address: string): Promise<void> {
  await adb(['disconnect', address]).catch(() => undefined);
}
