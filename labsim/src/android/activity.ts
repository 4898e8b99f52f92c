/**
 * Simulated activity manager: `am start|force-stop|broadcast|instrument` and `monkey`.
 * Every launch request is recorded (full command line) so tests can assert
 * on what the code under test asked the device to do.
 */
import type { AndroidDeviceSpec } from './spec';
import type { LogBuffer } from './logcat';
import type { PackageManager } from './packages';
import { shortComponent } from './packages';
import { qualifyClassName } from '../apk/apk';
import type { ToolIO } from './tool-io';
import { type AppProgram, RunningServices } from './app-code';
import { formatUid, instrument, type InstrumentationHost, type InstrumentationProgram } from './instrumentation';

export interface LaunchRecord {
  timeMs: number;
  /** The tool that was run: "am" or "monkey" (`am instrument` too: its component is the instrumentation's). */
  tool: string;
  args: string[];
  /** Full command line as typed, e.g. "am start -W -n pkg/.Main". */
  commandLine: string;
  /** Resolved component (pkg/full.Class) or null when resolution failed. */
  component: string | null;
  ok: boolean;
}

const VALUE_FLAGS = new Set(['-a', '-c', '-d', '-t', '-n', '-f', '-p', '--user', '--display', '--windowingMode', '--activityType', '-P', '--start-profiler', '--sampling', '--attach-agent', '-R']);
const EXTRA_FLAGS = new Set(['--es', '--ez', '--ei', '--el', '--ef', '--eu', '--ecn', '--eia', '--ela', '--efa', '--esa', '--esal']);

interface ParsedIntent {
  action?: string;
  categories: string[];
  data?: string;
  component?: string;
  pkg?: string;
  flags?: string;
  hasExtras: boolean;
  wait: boolean;
  forceStop: boolean;
  bare: string[];
}

function parseIntentArgs(args: string[]): ParsedIntent {
  const intent: ParsedIntent = { categories: [], hasExtras: false, wait: false, forceStop: false, bare: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-W') intent.wait = true;
    else if (a === '-S') intent.forceStop = true;
    else if (EXTRA_FLAGS.has(a)) {
      intent.hasExtras = true;
      i += 2;
    } else if (a === '--esn') {
      intent.hasExtras = true;
      i += 1;
    } else if (VALUE_FLAGS.has(a)) {
      const v = args[++i];
      if (a === '-a') intent.action = v;
      else if (a === '-c') intent.categories.push(v);
      else if (a === '-d') intent.data = v;
      else if (a === '-n') intent.component = v;
      else if (a === '-p') intent.pkg = v;
      else if (a === '-f') intent.flags = v;
    } else if (!a.startsWith('-')) intent.bare.push(a);
  }
  return intent;
}

function describeIntent(i: ParsedIntent, cmp?: string): string {
  const parts: string[] = [];
  if (i.action) parts.push(`act=${i.action}`);
  if (i.categories.length) parts.push(`cat=[${i.categories.join(',')}]`);
  if (i.data) parts.push(`dat=${i.data}`);
  if (i.flags) parts.push(`flg=${i.flags}`);
  if (i.pkg) parts.push(`pkg=${i.pkg}`);
  if (cmp) parts.push(`cmp=${cmp}`);
  if (i.hasExtras) parts.push('(has extras)');
  return `Intent { ${parts.join(' ')} }`;
}

/** A running app process (what `dumpsys gfxinfo` reports on). */
export interface AppProcess {
  pid: number;
  startMs: number;
}

export class ActivityManager {
  private readonly running = new Map<string, AppProcess>();
  private readonly launches: LaunchRecord[] = [];
  /** Whoever waits for a process to end: notified with its package and pid. */
  private readonly deathWatchers = new Set<(pkg: string, pid: number) => void>();
  /** Instrumentation packages running in a target's process (instrumentation package -> target package). */
  private readonly instrumented = new Map<string, string>();
  /** Code the simulator runs for some instrumentations (`pkg/cls`), instead of a short generic run. */
  readonly instrumentationPrograms = new Map<string, InstrumentationProgram>();
  /** What some apps do when started or sent a broadcast (by package). */
  readonly appPrograms = new Map<string, AppProgram>();
  readonly services = new RunningServices();
  /** Told when an app's activity comes to the front, and when its process ends (the device's screen follows). */
  onForeground: ((pkg: string) => void) | undefined;
  onStopped: ((pkg: string) => void) | undefined;

  constructor(private readonly spec: AndroidDeviceSpec, private readonly pm: PackageManager, private readonly log: LogBuffer) {}

  get launchLog(): LaunchRecord[] {
    return this.launches.map((l) => ({ ...l, args: [...l.args] }));
  }

  /** A reboot kills every app process. */
  resetProcesses(): void {
    for (const pkg of [...this.running.keys()]) this.endProcess(pkg);
  }

  /** Ends the package's process (and, for a running instrumentation's package, its target's), telling watchers. */
  private endProcess(pkg: string, pid?: number): void {
    const target = this.instrumented.get(pkg);
    if (target && target !== pkg) this.endProcess(target);
    const proc = this.running.get(pkg);
    if (!proc || (pid !== undefined && proc.pid !== pid)) return;
    this.running.delete(pkg);
    this.services.stopAll(pkg);
    this.onStopped?.(pkg);
    for (const watcher of [...this.deathWatchers]) watcher(pkg, proc.pid);
  }

  private watchProcess(pkg: string, pid: number, onEnd: () => void): void {
    if (this.running.get(pkg)?.pid !== pid) return onEnd();
    const watcher = (p: string, ended: number) => {
      if (p !== pkg || ended !== pid) return;
      this.deathWatchers.delete(watcher);
      onEnd();
    };
    this.deathWatchers.add(watcher);
  }


  isRunning(pkg: string): boolean {
    return this.running.has(pkg);
  }

  /** The app's main process, when it runs. */
  process(pkg: string): AppProcess | undefined {
    return this.running.get(pkg);
  }

  private startProcess(pkg: string): AppProcess {
    let proc = this.running.get(pkg);
    if (!proc) {
      proc = { pid: 20000 + this.launches.length, startMs: Date.now() };
      this.running.set(pkg, proc);
    }
    return proc;
  }

  /** What `am instrument` uses of this activity manager. */
  private get instrumentationHost(): InstrumentationHost {
    return {
      spec: this.spec, pm: this.pm, log: this.log,
      startProcess: (pkg) => this.startProcess(pkg),
      killProcess: (pkg, pid) => this.endProcess(pkg, pid),
      record: (tool, args, component, ok) => this.record(tool, args, component, ok),
      program: (component) => this.instrumentationPrograms.get(component),
      watchProcess: (pkg, pid, onEnd) => this.watchProcess(pkg, pid, onEnd),
      trackInstrumentation: (instrumentationPackage, targetPackage, done) => {
        this.instrumented.set(instrumentationPackage, targetPackage);
        void done.finally(() => {
          if (this.instrumented.get(instrumentationPackage) === targetPackage) this.instrumented.delete(instrumentationPackage);
        });
      },
    };
  }

  async am(args: string[], io: ToolIO): Promise<number> {
    const [sub, ...rest] = args;
    if (sub === 'start' || sub === 'start-activity') return this.start(args, rest, io);
    if (sub === 'instrument') return instrument(this.instrumentationHost, args, rest, io);
    if (sub === 'force-stop' || sub === 'kill') {
      const pkg = rest.filter((a, i) => !a.startsWith('-') && rest[i - 1] !== '--user').pop();
      if (pkg) this.endProcess(pkg);
      return 0;
    }
    if (sub === 'broadcast') return this.broadcast(rest, io);
    io.err(`Unknown command: ${sub ?? ''}\n`);
    return 255;
  }

  /** `am broadcast`: the receiving app's result, or 0 when no receiver of a simulated app takes it. */
  private broadcast(args: string[], io: ToolIO): number {
    const intent = parseIntentArgs(args);
    const targetPkg = intent.pkg ?? intent.component?.split('/')[0];
    let result: { code: number; data?: string } | undefined;
    for (const [pkg, program] of this.appPrograms) {
      if (targetPkg && targetPkg !== pkg) continue;
      if (!this.pm.get(pkg) || !intent.action) continue;
      result = program.broadcast?.(intent.action);
      if (result) {
        // A receiver runs in its app's process, started for it when needed.
        this.startProcess(pkg);
        break;
      }
    }
    io.out(`Broadcasting: ${describeIntent(intent)}\nBroadcast completed: result=${result?.code ?? 0}${result?.data !== undefined ? `, data="${result.data}"` : ''}\n`);
    return 0;
  }

  /** `dumpsys activity services [filter]`. */
  dumpsysServices(filter: string | undefined): string {
    return this.services.dumpsys(filter, (pkg) => {
      const proc = this.running.get(pkg);
      const uid = this.pm.get(pkg)?.uid ?? 0;
      return proc && { pid: proc.pid, user: formatUid(uid) };
    });
  }

  /** A launcher icon was tapped: the app's process starts if needed and its launcher activity comes to the front. */
  startFromLauncher(pkgName: string): void {
    const pkg = this.pm.get(pkgName);
    if (!pkg?.launcherActivity) return;
    const wasRunning = this.running.has(pkgName);
    const proc = this.startProcess(pkgName);
    if (!wasRunning) this.log.log('I', 'ActivityManager', `Start proc ${proc.pid}:${pkgName}/${formatUid(pkg.uid)} for top-activity {${pkgName}/${pkg.launcherActivity}}`);
    this.log.log('I', 'ActivityTaskManager', `Displayed ${shortComponent(pkgName, pkg.launcherActivity)}: +${wasRunning ? 110 : 520}ms`);
    this.onForeground?.(pkgName);
  }

  private record(tool: string, args: string[], component: string | null, ok: boolean): void {
    this.launches.push({ timeMs: Date.now(), tool, args: [...args], commandLine: [tool, ...args].join(' '), component, ok });
  }

  private start(allArgs: string[], args: string[], io: ToolIO): number {
    const intent = parseIntentArgs(args);
    let pkgName: string | undefined;
    let cls: string | undefined;
    if (intent.component) {
      const slash = intent.component.indexOf('/');
      pkgName = slash < 0 ? intent.component : intent.component.slice(0, slash);
      cls = slash < 0 ? undefined : qualifyClassName(pkgName, intent.component.slice(slash + 1));
    } else {
      pkgName = intent.pkg ?? intent.bare[0];
      const launchable = intent.action === 'android.intent.action.MAIN' && intent.categories.includes('android.intent.category.LAUNCHER');
      cls = launchable && pkgName ? this.pm.get(pkgName)?.launcherActivity ?? undefined : undefined;
    }
    const pkg = pkgName ? this.pm.get(pkgName) : undefined;
    const shown = intent.component ?? (pkgName && cls ? shortComponent(pkgName, cls) : undefined);
    io.out(`Starting: ${describeIntent(intent, shown)}\n`);
    if (!pkg || !cls) {
      this.record('am', allArgs, null, false);
      io.err(`Error: Activity not started, unable to resolve ${describeIntent(intent, shown)}\n`);
      return 0;
    }
    if (!pkg.activities.includes(cls)) {
      this.record('am', allArgs, null, false);
      io.err(`Error type 3\nError: Activity class {${pkg.packageName}/${cls}} does not exist.\n`);
      return 0;
    }
    if (intent.forceStop) this.endProcess(pkg.packageName);
    const component = `${pkg.packageName}/${cls}`;
    const wasRunning = this.running.has(pkg.packageName);
    this.record('am', allArgs, component, true);
    this.startProcess(pkg.packageName);
    const finished = this.appPrograms.get(pkg.packageName)?.activityStarted?.(cls, { startForegroundService: (service) => this.services.start(pkg.packageName, service, true) }) === 'finished';
    const total = wasRunning ? 95 + Math.floor(Math.random() * 40) : 480 + Math.floor(Math.random() * 300);
    if (!wasRunning) {
      this.log.log('I', 'ActivityManager', `Start proc ${20000 + this.launches.length}:${pkg.packageName}/${formatUid(pkg.uid)} for top-activity {${component}}`);
    }
    this.log.log('I', 'ActivityTaskManager', `Displayed ${shortComponent(pkg.packageName, cls)}: +${total}ms`);
    // An activity that finishes in onCreate leaves the previous one in front.
    if (!finished) this.onForeground?.(pkg.packageName);
    if (wasRunning) io.out('Warning: Activity not started, its current task has been brought to the front\n');
    if (intent.wait) {
      const lines = ['Status: ok'];
      if (this.spec.sdk >= 29) lines.push(`LaunchState: ${wasRunning ? 'HOT' : 'COLD'}`);
      lines.push(`Activity: ${shortComponent(pkg.packageName, cls)}`);
      if (this.spec.sdk < 29) lines.push(`ThisTime: ${total}`);
      lines.push(`TotalTime: ${total}`, `WaitTime: ${total + 6}`, 'Complete');
      io.out(lines.join('\n') + '\n');
    }
    return 0;
  }

  /** `monkey -p <pkg> -c android.intent.category.LAUNCHER 1`: the classic launch-without-resolving trick. */
  monkey(args: string[], io: ToolIO): number {
    const pIndex = args.indexOf('-p');
    const pkg = pIndex >= 0 ? this.pm.get(args[pIndex + 1]) : undefined;
    io.out(args.map((a) => `  bash arg: ${a}\n`).join(''));
    io.out(`args: [${args.join(', ')}]\n` + args.map((a) => ` arg: "${a}"\n`).join(''));
    if (!pkg?.launcherActivity) {
      this.record('monkey', args, null, false);
      io.out('** No activities found to run, monkey aborted.\n');
      return 252;
    }
    const component = `${pkg.packageName}/${pkg.launcherActivity}`;
    this.record('monkey', args, component, true);
    this.startProcess(pkg.packageName);
    this.onForeground?.(pkg.packageName);
    io.out(`data="${pkg.packageName}"\ndata="android.intent.category.LAUNCHER"\nEvents injected: 1\n## Network stats: elapsed time=24ms (0ms mobile, 0ms wifi, 24ms not connected)\n`);
    return 0;
  }
}
