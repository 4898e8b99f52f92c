/**
 * `am instrument`: what Android's Am/Instrument command and ActivityManagerService.startInstrumentation do, with
 * the texts real devices print (AOSP frameworks/base/cmds/am Instrument.java, BaseCommand.java).
 *
 * The simulator runs no app code: a declared instrumentation "runs" for a short while in its target package's
 * process (force-stopped before and after, as ActivityManagerService does) and finishes with RESULT_OK (-1) and no
 * result bundle, as ApiDemos' LocalSampleInstrumentation does (`finish(Activity.RESULT_OK, null)`).
 */
import type { AppProcess } from './activity';
import type { LogBuffer } from './logcat';
import type { InstalledInstrumentation, InstalledPackage, PackageManager } from './packages';
import type { AndroidDeviceSpec } from './spec';
import type { ToolIO } from './tool-io';

/** What the instrumentation command needs from the activity manager. */
export interface InstrumentationHost {
  readonly spec: AndroidDeviceSpec;
  readonly pm: PackageManager;
  readonly log: LogBuffer;
  /** Starts the package's process (or returns the running one). */
  startProcess(pkg: string): AppProcess;
  /** Ends the package's process; with `pid`, only when that process is still the one running. */
  killProcess(pkg: string, pid?: number): void;
  /** Records the request in the launch log. */
  record(tool: string, args: string[], component: string | null, ok: boolean): void;
  /** The code an installed instrumentation runs, when the simulator has it (`pkg/cls`). */
  program(component: string): InstrumentationProgram | undefined;
  /** Calls `onEnd` as that process of the package ends (force-stop, crash, reboot), at once if it is not running. */
  watchProcess(pkg: string, pid: number, onEnd: () => void): void;
  /** Marks the instrumentation package as running in the target's process until `done` settles. */
  trackInstrumentation(instrumentationPackage: string, targetPackage: string, done: Promise<unknown>): void;
}

/** A run of an instrumentation's code: what it prints when it starts and ends, and when it ends on its own. */
export interface InstrumentationRun {
  /** The status stream printed when the run starts (a test class line). */
  startText: string;
  /** The result stream printed when it finishes. */
  finishText: string;
  /** Resolves when the code finished by itself. */
  finished: Promise<void>;
  /** The process was killed: the code stops at once. */
  kill(): void;
}

/** Starts an instrumentation's code in its target's process; throws when the code fails to start. */
export type InstrumentationProgram = () => InstrumentationRun;

/** Activity.RESULT_OK, what a finished instrumentation reports. */
const RESULT_OK = -1;
/** Activity.RESULT_CANCELED, what an instrumentation whose process died reports. */
const RESULT_CANCELED = 0;
/** How long a run takes: short, so that tests stay fast, but long enough to see the process running. */
const RUN_MS = { min: 500, spread: 200 };

/** A failure BaseCommand reports as IllegalArgumentException: usage text and `Error: ...` on stderr, exit 0. */
class UsageError extends Error {}

interface InstrumentOptions {
  wait: boolean;
  raw: boolean;
  user: string;
  abi?: string;
  component: string;
}

/** Am.runInstrument's option loop; returns the exit code instead when the command ends there. */
function parseOptions(args: string[], io: ToolIO): InstrumentOptions | number {
  const options: InstrumentOptions = { wait: false, raw: false, user: 'current', component: '' };
  let i = 0;
  const required = (): string => {
    if (i + 1 >= args.length) throw new UsageError(`Argument expected after "${args[i]}"`);
    return args[++i];
  };
  for (; i < args.length && args[i].startsWith('-'); i++) {
    const opt = args[i];
    if (opt === '--') {
      i++;
      break;
    }
    if (opt === '-w') options.wait = true;
    else if (opt === '-r') options.raw = true;
    else if (opt === '-e') {
      // Arguments for the instrumentation's code, which the simulator does not run.
      required();
      required();
    } else if (opt === '-p') required();
    else if (opt === '--user') options.user = required();
    else if (opt === '--abi') options.abi = required();
    else if (['--no_window_animation', '--no-window-animation', '--no-hidden-api-checks', '--no-test-api-access',
      '--no-isolated-storage', '--no-restart', '--always-check-signature'].includes(opt)) {
      // Accepted; nothing in the simulator depends on them.
    } else {
      // Includes -m/-f (protobuf output), which the simulator does not produce.
      io.err(`Error: Unknown option: ${opt}\n`);
      return 0;
    }
  }
  if (options.user === 'all') {
    io.err("Error: Can't start instrumentation with user 'all'\n");
    return 0;
  }
  if (i >= args.length) throw new UsageError(`Argument expected after "${args[i - 1] ?? 'instrument'}"`);
  options.component = args[i];
  return options;
}

/** Instrument.parseComponentName: `pkg/cls` (`.cls` relative to pkg), or a package declaring exactly one. */
function resolveComponent(pm: PackageManager, arg: string): { pkg: string; cls: string } {
  const slash = arg.indexOf('/');
  if (slash >= 0) {
    const pkg = arg.slice(0, slash);
    const cls = arg.slice(slash + 1);
    return { pkg, cls: cls.startsWith('.') ? pkg + cls : cls };
  }
  const found = pm.instrumentations().filter((i) => i.packageName === arg);
  if (found.length === 0) throw new UsageError(`No instrumentation found for: ${arg}`);
  if (found.length > 1) throw new UsageError(`Found multiple instrumentations: ${found.map((i) => `${i.packageName}/${i.name}`).join(', ')}`);
  return { pkg: found[0].packageName, cls: found[0].name };
}

/** The stack trace printed with INSTRUMENTATION_FAILED (line numbers of an Android 10+ / an Android 8-9 build). */
function failureTrace(sdk: number, message: string): string {
  const frames = sdk >= 29
    ? ['com.android.commands.am.Instrument.run(Instrument.java:519)', 'com.android.commands.am.Am.runInstrument(Am.java:202)',
      'com.android.commands.am.Am.onRun(Am.java:80)', 'com.android.internal.os.BaseCommand.run(BaseCommand.java:60)',
      'com.android.commands.am.Am.main(Am.java:50)', 'com.android.internal.os.RuntimeInit.nativeFinishInit(Native Method)',
      'com.android.internal.os.RuntimeInit.main(RuntimeInit.java:399)']
    : ['com.android.commands.am.Instrument.run(Instrument.java:410)', 'com.android.commands.am.Am.runInstrument(Am.java:232)',
      'com.android.commands.am.Am.onRun(Am.java:125)', 'com.android.internal.os.BaseCommand.run(BaseCommand.java:54)',
      'com.android.commands.am.Am.main(Am.java:95)', 'com.android.internal.os.RuntimeInit.nativeFinishInit(Native Method)',
      'com.android.internal.os.RuntimeInit.main(RuntimeInit.java:284)'];
  return `android.util.AndroidException: ${message}\n${frames.map((f) => `\tat ${f}\n`).join('')}`;
}

/** TextStatusReporter's status lines (keys sorted since Android 10; earlier builds printed id first). */
function statusLines(bundle: Array<[string, string]>, resultCode: number, sdk: number): string {
  const entries = sdk >= 29 ? [...bundle].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : bundle;
  return entries.map(([k, v]) => `INSTRUMENTATION_STATUS: ${k}=${v}\n`).join('') + `INSTRUMENTATION_STATUS_CODE: ${resultCode}\n`;
}

/** `am instrument ...` (also `cmd activity instrument ...`). Returns the exit code. */
export async function instrument(host: InstrumentationHost, allArgs: string[], args: string[], io: ToolIO): Promise<number> {
  const { spec, pm, log } = host;
  let options: InstrumentOptions;
  let component: { pkg: string; cls: string };
  try {
    const parsed = parseOptions(args, io);
    if (typeof parsed === 'number') return parsed;
    options = parsed;
    component = resolveComponent(pm, options.component);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // The real command prints the whole `am` help before this line.
    io.err(`\nError: ${e.message}\n`);
    return 0;
  }
  const flat = `${component.pkg}/${component.cls}`;

  // A failed start: ActivityManagerService's report (to a -w watcher), then Instrument's AndroidException (exit 1).
  const fail = (report: string | null, message: string): number => {
    host.record('am', allArgs, null, false);
    if (report) log.log('W', 'ActivityManager', report);
    if (options.wait && options.raw) io.out(`onError: commandError=true message=${message}\n`);
    io.err(failureTrace(spec.sdk, message));
    if (options.wait && report) {
      io.out(statusLines([['id', 'ActivityManagerService'], ['Error', report]], -1, spec.sdk));
    }
    return 1;
  };
  if (options.abi && !spec.cpu.abis.includes(options.abi)) return fail(null, `INSTRUMENTATION_FAILED: Unsupported instruction set ${options.abi}`);
  const instrumentation = pm.instrumentations().find((i) => i.packageName === component.pkg && i.name === component.cls);
  if (!instrumentation) return fail(`Unable to find instrumentation info for: ComponentInfo{${flat}}`, `INSTRUMENTATION_FAILED: ${flat}`);
  const target = instrumentation.targetPackage ? pm.get(instrumentation.targetPackage) : undefined;
  if (!target) return fail(`Unable to find instrumentation target package: ${instrumentation.targetPackage}`, `INSTRUMENTATION_FAILED: ${flat}`);

  forceStop(host, target, 'start instr');
  host.record('am', allArgs, flat, true);
  const proc = host.startProcess(target.packageName);
  log.log('I', 'ActivityManager', `Start proc ${proc.pid}:${target.packageName}/${formatUid(target.uid)} for added application ${target.packageName}`);
  const program = host.program(flat);
  if (program) return runProgram(host, program, options, component.pkg, target, proc.pid, io);
  const finished = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      forceStop(host, target, 'finished inst', proc.pid);
      resolve(true);
    }, RUN_MS.min + Math.floor(Math.random() * RUN_MS.spread));
    timer.unref();
  });
  if (!options.wait) return 0; // without -w the command returns at once; the run goes on
  // The caller going away (shell killed, device rebooting) ends the command, not the run.
  if (await Promise.race([finished, io.gone.then(() => false)])) io.out(`INSTRUMENTATION_CODE: ${RESULT_OK}\n`);
  return 0;
}

/**
 * Runs code the simulator has for an instrumentation until it finishes (RESULT_OK, its result stream) or its
 * process dies (`Process crashed.`, RESULT_CANCELED), as ActivityManagerService reports both to an `-w` watcher.
 */
async function runProgram(host: InstrumentationHost, program: InstrumentationProgram, options: InstrumentOptions, instrumentationPackage: string,
  target: InstalledPackage, pid: number, io: ToolIO): Promise<number> {
  let run: InstrumentationRun | undefined;
  let outcome: Promise<string>;
  try {
    run = program();
    const started = run;
    outcome = new Promise<string>((resolve) => {
      let settled = false;
      // The code dies with its process at once, so that a new run can take its place (its port, its state).
      host.watchProcess(target.packageName, pid, () => {
        if (settled) return;
        settled = true;
        started.kill();
        resolve('killed');
      });
      void started.finished.then(() => {
        if (settled) return;
        settled = true;
        forceStop(host, target, 'finished inst', pid);
        resolve('finished');
      });
    });
  } catch (e) {
    host.log.log('E', 'AndroidRuntime', `FATAL EXCEPTION: main\nProcess: ${target.packageName}, PID: ${pid}\n${e instanceof Error ? e.message : String(e)}`);
    forceStop(host, target, 'crash', pid);
    outcome = Promise.resolve('killed');
  }
  host.trackInstrumentation(instrumentationPackage, target.packageName, outcome);
  if (!options.wait) return 0;
  if (run) io.out(run.startText);
  const how = await Promise.race([outcome, io.gone.then(() => 'gone')]);
  if (how === 'finished') io.out(`${run?.finishText ?? ''}INSTRUMENTATION_CODE: ${RESULT_OK}\n`);
  else if (how === 'killed') io.out(`INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: ${RESULT_CANCELED}\n`);
  return 0;
}

/** ActivityManagerService.forceStopPackageLocked around an instrumentation run, with its log line. */
function forceStop(host: InstrumentationHost, pkg: InstalledPackage, reason: string, pid?: number): void {
  host.log.log('I', 'ActivityManager', `Force stopping ${pkg.packageName} appid=${pkg.uid % 100_000} user=0: ${reason}`);
  host.killProcess(pkg.packageName, pid);
}

/** UserHandle.formatUid for user 0: u0a<n> for apps, u0s<n> for system uids. */
export function formatUid(uid: number): string {
  const appId = uid % 100_000;
  return appId >= 10_000 ? `u0a${appId - 10_000}` : `u0s${appId}`;
}
