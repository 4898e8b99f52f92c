/**
 * What this gateway's automation installation is, for the hub's `DeviceGatewayInformation.automation`: Appium's
 * version (its package.json), the drivers `appium driver list --installed --json` lists, a hash that tells
 * installations apart, and what is wrong (the platforms' checks, a driver list that fails or is empty).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AutomationReport } from '@devicelab/proto';
import { signalGroup, spawnAppium } from './appium-child';

export interface InstallationPaths {
  appiumPackageDir: string;
  appiumHome: string;
}

const DRIVER_LIST_TIMEOUT_MS = 60_000;
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

export async function readAutomationReport(paths: InstallationPaths, checks: Array<() => Promise<string | undefined>>): Promise<AutomationReport> {
  const problems: string[] = [];
  let version = '';
  try {
    const pkg = JSON.parse(await readFile(path.join(paths.appiumPackageDir, 'package.json'), 'utf8')) as { version?: unknown };
    version = typeof pkg.version === 'string' ? pkg.version : '';
  } catch (err) {
    problems.push(`Appium is not installed at ${paths.appiumPackageDir} (${err instanceof Error ? err.message : String(err)})`);
  }
  let drivers: AutomationReport['drivers'] = [];
  if (version) {
    try {
      drivers = await installedDrivers(paths);
      if (drivers.length === 0) problems.push(`No Appium driver is installed in ${paths.appiumHome}`);
    } catch (err) {
      problems.push(`appium driver list failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  for (const check of checks) {
    const problem = await check().catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
    if (problem) problems.push(problem);
  }
  const pathHash = createHash('sha256')
    .update([paths.appiumHome, version, ...drivers.map((d) => `${d.name}@${d.version}`)].join('\0')).digest('hex');
  return { path: paths.appiumHome, version, pathHash, drivers, configurationError: problems.join('; ') };
}

/** Driver lists read, by installation: a process lists each once (its drivers do not change under it). */
const listed = new Map<string, Promise<AutomationReport['drivers']>>();

/** `appium driver list --installed --json`, run with the gateway's APPIUM_HOME. */
function installedDrivers(paths: InstallationPaths): Promise<AutomationReport['drivers']> {
  const key = `${paths.appiumPackageDir}\0${paths.appiumHome}`;
  let drivers = listed.get(key);
  if (!drivers) {
    drivers = listDrivers(paths);
    listed.set(key, drivers);
    drivers.catch(() => listed.delete(key)); // a failed listing is tried again by the next gateway
  }
  return drivers;
}

function listDrivers(paths: InstallationPaths): Promise<AutomationReport['drivers']> {
  return new Promise((resolve, reject) => {
    const child = spawnAppium(paths.appiumPackageDir, ['driver', 'list', '--installed', '--json'], { APPIUM_HOME: paths.appiumHome });
    const out: Buffer[] = [];
    let size = 0;
    child.stdout?.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_OUTPUT_BYTES) out.push(chunk);
    });
    child.stderr?.resume();
    const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), DRIVER_LIST_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(signal ? `ended by ${signal}` : `exit code ${code}`));
      const stdout = Buffer.concat(out).toString('utf8');
      try {
        const byName = JSON.parse(stdout) as Record<string, { version?: unknown; automationName?: unknown; installed?: unknown }>;
        resolve(Object.entries(byName)
          .filter(([, driver]) => driver.installed !== false)
          .map(([name, driver]) => ({
            name,
            version: typeof driver.version === 'string' ? driver.version : '',
            automationName: typeof driver.automationName === 'string' ? driver.automationName : '',
          })));
      } catch {
        reject(new Error('its output is not JSON'));
      }
    });
  });
}
