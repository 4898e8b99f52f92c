/**
 * Starts Appium's CLI (`appium server ...`, `appium driver list ...`) as a child Node process in its own process
 * group. The child inherits the gateway's environment; what the device needs on top (APPIUM_HOME, ANDROID_HOME, ...)
 * is handed over as JSON and set by the child itself before Appium loads. The child also watches its parent: when
 * the gateway dies without ending it (SIGKILL), it ends its whole group, so no Appium outlives its gateway.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** Runs in the child: environment, parent watch, then Appium's main with the arguments Appium expects. */
const CHILD_BOOTSTRAP = `
const path = require('path');
const [packageDir, environment] = process.argv.splice(1, 3).slice(1);
Object.assign(process.env, JSON.parse(environment));
const parent = process.ppid;
setInterval(() => {
  if (process.ppid === parent) return;
  try { process.kill(-process.pid, 'SIGKILL'); } catch { process.exit(1); }
}, 1000).unref();
process.argv.splice(1, 0, path.join(packageDir, 'index.js'));
require(path.join(packageDir, 'build', 'lib', 'main.js')).main();
`;

/** Marks the gateway's Appium children in the process list (`ps`): the first argument after the bootstrap. */
export const APPIUM_CHILD_MARK = '--devicelab-appium';

export function spawnAppium(appiumPackageDir: string, args: string[], environment: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['-e', CHILD_BOOTSTRAP, '--', APPIUM_CHILD_MARK, appiumPackageDir, JSON.stringify(environment), ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Sends the signal to the child's whole process group (Appium and what it started, such as adb clients). */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
}
