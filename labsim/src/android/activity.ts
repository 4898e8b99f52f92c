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
import { formatUid, instrument, type InstrumentationHost } from './instrumentation';

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
  /** Told when an app's activity comes to the front, and when its process ends (the device's screen follows). */
  onForeground: ((pkg: string) => void) | undefined;
  onStopped: ((pkg: string) => void) | undefined;

  constructor(private readonly spec: AndroidDeviceSpec, private readonly pm: PackageManager, private readonly log: LogBuffer) {}

  get launchLog(): LaunchRecord[] {
    return this.launches.map((l) => ({ ...l, args: [...l.args] }));
  }

  /** A reboot kills every app process. */
  resetProcesses(): void {
    this.running.clear();
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
      killProcess: (pkg, pid) => {
        if (pid === undefined || this.running.get(pkg)?.pid === pid) this.running.delete(pkg);
      },
      record: (tool, args, component, ok) => this.record(tool, args, component, ok),
    };
  }

  async am(args: string[], io: ToolIO): Promise<number> {
    const [sub, ...rest] = args;
    if (sub === 'start' || sub === 'start-activity') return this.start(args, rest, io);
    if (sub === 'instrument') return instrument(this.instrumentationHost, args, rest, io);
    if (sub === 'force-stop' || sub === 'kill') {
      const pkg = rest.filter((a, i) => !a.startsWith('-') && rest[i - 1] !== '--user').pop();
      if (pkg) this.stopProcess(pkg);
      return 0;
    }
    if (sub === 'broadcast') {
      io.out(`Broadcasting: ${describeIntent(parseIntentArgs(rest))}\nBroadcast completed: result=0\n`);
      return 0;
    }
    io.err(`Unknown command: ${sub ?? ''}\n`);
    return 255;
  }

  private stopProcess(pkg: string): void {
    this.running.delete(pkg);
    this.onStopped?.(pkg);
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
    if (intent.forceStop) this.stopProcess(pkg.packageName);
    const component = `${pkg.packageName}/${cls}`;
    const wasRunning = this.running.has(pkg.packageName);
    this.record('am', allArgs, component, true);
    this.startProcess(pkg.packageName);
    const total = wasRunning ? 95 + Math.floor(Math.random() * 40) : 480 + Math.floor(Math.random() * 300);
    if (!wasRunning) {
      this.log.log('I', 'ActivityManager', `Start proc ${20000 + this.launches.length}:${pkg.packageName}/${formatUid(pkg.uid)} for top-activity {${component}}`);
    }
    this.log.log('I', 'ActivityTaskManager', `Displayed ${shortComponent(pkg.packageName, cls)}: +${total}ms`);
    this.onForeground?.(pkg.packageName);
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
