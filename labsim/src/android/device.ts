/**
 * One simulated Android device: identity, sandboxed file system, fake tool
 * PATH, boot lifecycle and fault injection. Implements the DevicePort the
 * adbd protocol layer talks to.
 */
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Duplex } from 'node:stream';
import { DeviceSockets, type DeviceSocketAddress } from './device-sockets';
import type { AuthMode, DevicePort, DropFault, InstallOutcome, ShellIO } from '../adbd/device-port';
import { AdbdListener } from '../adbd/listener';
import { ActivityManager, LaunchRecord } from './activity';
import { LogBuffer } from './logcat';
import { DeviceFs } from './device-fs';
import { DeviceProcess, DeviceShellHost, SHELL_ONLY, runDeviceShell, shellCommands } from './shell';
import type { CommandFn } from './shell/interpreter';
import { InstalledPackage, PackageManager } from './packages';
import { ProcModel } from './procfs';
import { DeviceScreen, createDeviceScreen } from './screen';
import { DevicePrograms } from './screen/device-programs';
import { ROTATION_SETTINGS, followRotationSettings } from './screen/rotation-policy';
import { buildProps } from './props';
import type { AndroidDeviceSpec } from './spec';
import { Battery, BatteryState, InputEvent, Settings, WindowManager } from './system-services';
import { BufferedToolIO } from './tool-io';
import { installAppiumPrograms } from './uiautomator2';
import { TOOL_NAMES, ToolContext, readHostFile, runTool } from './tools';

export type PowerState = 'booted' | 'booting' | 'rebooting' | 'stopped';

export interface DeviceTimings {
  /** Time the device is unreachable during a reboot. */
  rebootMs: number;
  /** Time after adbd is back until sys.boot_completed becomes 1. */
  bootCompleteMs: number;
}

/** The device's top-level folders (`ls /`), with its links. */
const ROOT_DIRS = ['acct', 'apex', 'cache', 'config', 'data/local/tmp', 'data/app', 'dev', 'linkerconfig', 'metadata', 'mnt', 'odm', 'oem', 'proc/net', 'product', 'storage/self', 'sys', 'system/bin', 'system/etc', 'system_ext', 'vendor',
  'storage/emulated/0/Download', 'storage/emulated/0/DCIM', 'storage/emulated/0/Pictures'];
const ROOT_LINKS: Record<string, string> = { sdcard: '/storage/self/primary', 'storage/self/primary': '/storage/emulated/0', bin: '/system/bin', etc: '/system/etc', d: '/sys/kernel/debug' };
/** System services and daemons every booted device runs (`ps -A`), beside the apps. */
const SYSTEM_PROCESSES: Array<[user: string, name: string]> = [
  ['root', 'init'], ['root', 'kthreadd'], ['root', 'ueventd'], ['logd', 'logd'], ['system', 'servicemanager'], ['system', 'hwservicemanager'],
  ['root', 'vold'], ['root', 'netd'], ['root', 'zygote64'], ['root', 'zygote'], ['system', 'surfaceflinger'], ['shell', 'adbd'],
  ['system', 'system_server'], ['u0_a150', 'com.android.systemui'], ['radio', 'com.android.phone'], ['u0_a120', 'com.google.android.inputmethod.latin'],
];

/** The device's kernel as `uname` reports it: the release follows the Android version it shipped with. */
function kernelOf(spec: AndroidDeviceSpec): { release: string; version: string; machine: string } {
  const release = spec.sdk >= 33 ? '5.10.177-android13-4-00003-g1a8b2e6f4a1c-ab10812345' : spec.sdk >= 31 ? '5.4.210-android12-9-00001-g3c5e2a9b7d4f' : spec.sdk >= 29 ? '4.14.190-perf+' : spec.sdk >= 26 ? '4.4.153-perf+' : '3.18.31-perf';
  const abi = spec.cpu.abis[0];
  const machine = abi === 'arm64-v8a' ? 'aarch64' : abi === 'x86_64' ? 'x86_64' : abi === 'x86' ? 'i686' : 'armv7l';
  return { release, version: '#1 SMP PREEMPT Mon Jan 8 12:00:00 UTC 2024', machine };
}

export class SimAndroidDevice extends EventEmitter implements DevicePort {
  readonly fsRoot: string;
  readonly files: DeviceFs;
  readonly listener: AdbdListener;
  private readonly shellHost: DeviceShellHost;
  private readonly shellCommands: ReadonlyMap<string, CommandFn>;
  private readonly propOverrides: Record<string, string> = {};
  private readonly inputs: InputEvent[] = [];
  private readonly appOps = new Map<string, string>();
  private readonly idleWhitelist = new Set<string>();
  private bootAtMs = Date.now();
  private bootCompleted = true;
  private power: PowerState = 'stopped';
  private auth: AuthMode = 'none';
  private dropFault: DropFault | undefined;
  private rebootTimers: NodeJS.Timeout[] = [];
  private proc: ProcModel;
  readonly logcat: LogBuffer;
  readonly pm: PackageManager;
  readonly am: ActivityManager;
  readonly battery: Battery;
  readonly settings: Settings;
  readonly wm: WindowManager;
  /** What the display shows (screencap, minicap, the UiAutomator2 server read it; input changes it). */
  readonly screen: DeviceScreen;
  /** Sockets programs on the device listen on (adb forward's far end). */
  readonly sockets = new DeviceSockets();
  /** Programs the shell started from pushed files (minicap, minitouch). */
  private readonly programs: DevicePrograms;

  constructor(readonly spec: AndroidDeviceSpec, readonly stateDir: string, readonly port: number, readonly timings: DeviceTimings) {
    super();
    this.fsRoot = path.join(stateDir, 'fs');
    this.files = new DeviceFs(this.fsRoot);
    this.shellHost = {
      files: this.files,
      toolNames: new Set<string>(TOOL_NAMES),
      runTool: (tool, args, io) => runTool(this.toolContext(), tool, args, io),
      kernel: kernelOf(spec),
      hostname: 'localhost',
      timezone: spec.timezone,
      processes: () => this.processes(),
      runProgram: (word, args, vars, io) => this.programs.run(word, args, vars, io),
      kill: (pid) => this.programs.kill(pid),
    };
    this.shellCommands = shellCommands(this.shellHost);
    this.logcat = new LogBuffer(spec.timezone, this.bootAtMs);
    this.logcat.reset(this.bootAtMs);
    this.proc = new ProcModel(spec, this.bootAtMs);
    this.pm = new PackageManager(spec, this.fsRoot, this.logcat);
    this.am = new ActivityManager(spec, this.pm, this.logcat);
    this.battery = new Battery(spec.battery);
    this.settings = new Settings(spec);
    this.wm = new WindowManager(spec);
    this.screen = createDeviceScreen(spec, this.pm, this.am, this.battery, (p) => this.hostPath(p));
    this.programs = new DevicePrograms(spec, this.files, this.sockets, this.screen);
    this.settings.onChange = (ns, key) => {
      if (ns === 'system' && ROTATION_SETTINGS.has(key)) followRotationSettings((k) => this.settings.get('system', k), this.screen);
    };
    installAppiumPrograms(this.am, {
      sockets: this.sockets, screen: this.screen, spec, props: () => this.props(), pm: this.pm,
      androidId: () => this.settings.get('secure', 'android_id') ?? '',
    });
    this.listener = new AdbdListener(this, port);
  }

  get adbSerial(): string {
    return `127.0.0.1:${this.port}`;
  }

  get powerState(): PowerState {
    return this.power;
  }

  get isBootCompleted(): boolean {
    return this.bootCompleted;
  }

  async start(): Promise<void> {
    this.createFileSystem();
    await this.listener.start();
    this.power = 'booted';
  }

  async stop(): Promise<void> {
    this.rebootTimers.forEach(clearTimeout);
    this.rebootTimers = [];
    this.programs.killAll();
    this.sockets.closeAll();
    await this.listener.stop();
    this.power = 'stopped';
  }

  // ---- DevicePort --------------------------------------------------------

  banner(): string {
    const p = this.props();
    return `device::ro.product.name=${p['ro.product.name']};ro.product.model=${p['ro.product.model']};ro.product.device=${p['ro.product.device']};features=${this.features().join(',')}`;
  }

  /** Features follow what the simulated release's adbd supports, and only what we implement. */
  features(): string[] {
    const f: string[] = [];
    if (this.spec.sdk >= 24) f.push('shell_v2', 'cmd');
    if (this.spec.sdk >= 28) f.push('stat_v2');
    if (this.spec.sdk >= 26) f.push('fixed_push_mkdir');
    if (this.spec.sdk >= 29) f.push('abb_exec', 'ls_v2');
    return f;
  }

  authMode(): AuthMode {
    return this.auth;
  }

  takeDropFault(): DropFault | undefined {
    const f = this.dropFault;
    this.dropFault = undefined;
    return f;
  }

  runShell(command: string, io: ShellIO): Promise<number> {
    return runDeviceShell(this.shellHost, this.shellCommands, command, io);
  }

  async installStream(apk: Buffer, pmArgs: string[]): Promise<InstallOutcome> {
    const r = await this.pm.install(apk, this.pm.installOptions(pmArgs));
    return { ok: r.ok, output: r.text + '\n' };
  }

  async runTool(tool: string, args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
    const io = new BufferedToolIO();
    const code = await runTool(this.toolContext(), tool, args, io);
    return { stdout: io.stdout, stderr: io.stderr, code };
  }

  hostPath(devicePath: string, followLast = true): string {
    return this.files.hostPath(devicePath, '/', followLast);
  }

  writableHostPath(devicePath: string, followLast = true): string {
    return this.files.writableHostPath(devicePath, '/', followLast);
  }

  refreshGeneratedFiles(): void {
    const now = Date.now();
    const write = (rel: string, content: string) => {
      const file = path.join(this.fsRoot, rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, content);
    };
    write('proc/meminfo', this.proc.meminfo(now));
    write('proc/stat', this.proc.stat(now));
    write('proc/uptime', this.proc.uptime(now));
    write('proc/loadavg', this.proc.loadavg(now));
    write('proc/net/dev', this.proc.netDev(now));
    write('sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq', `${this.proc.cpuFreqKhz(now)}\n`);
    for (const { policy, khz } of this.proc.cpuFreqPolicies(now)) {
      write(`sys/devices/system/cpu/cpufreq/policy${policy}/scaling_cur_freq`, `${khz}\n`);
    }
    write('sys/devices/system/cpu/online', `0-${this.spec.cpu.cores - 1}\n`);
    write('sys/class/net/wlan0/address', `${this.spec.wifiMac}\n`);
  }

  connectSocket(address: DeviceSocketAddress): Duplex | undefined {
    return this.sockets.connect(address);
  }

  reboot(target = ''): void {
    if (this.power !== 'booted' && this.power !== 'booting') return;
    this.power = 'rebooting';
    this.bootCompleted = false;
    this.emit('state', this.power);
    this.logcat.log('I', 'ShutdownThread', `Rebooting, reason: ${target || 'userrequested'}`);
    // The programs that listened on the device's sockets end with everything else running on it.
    this.programs.killAll();
    this.sockets.closeAll();
    void this.listener.stop();
    this.rebootTimers.push(
      setTimeout(() => {
        this.bootAtMs = Date.now();
        this.proc = new ProcModel(this.spec, this.bootAtMs);
        this.logcat.reset(this.bootAtMs);
        this.am.resetProcesses();
        this.screen.reset();
        this.power = 'booting';
        this.listener
          .start()
          .then(() => this.emit('state', this.power))
          .catch((e: Error) => this.emit('error', e));
        this.rebootTimers.push(
          setTimeout(() => {
            this.bootCompleted = true;
            this.power = 'booted';
            this.logcat.log('I', 'ActivityManager', 'Boot completed');
            this.emit('state', this.power);
          }, this.timings.bootCompleteMs),
        );
      }, this.timings.rebootMs),
    );
  }

  // ---- fault injection and state -----------------------------------------

  setAuthMode(mode: AuthMode): void {
    this.auth = mode;
  }

  /** Arms a one-shot connection drop for the next transport that connects (or the current one on reconnect). */
  armDropFault(fault: DropFault): void {
    this.dropFault = fault;
  }

  /** Drops live transports now (the adb server will reconnect on its own). */
  dropConnections(): void {
    this.listener.dropConnections();
  }

  setBattery(state: Partial<BatteryState>): void {
    this.battery.set(state);
  }

  props(): Record<string, string> {
    return { ...buildProps(this.spec, this.bootCompleted), ...this.propOverrides };
  }

  launchLog(): LaunchRecord[] {
    return this.am.launchLog;
  }

  inputLog(): InputEvent[] {
    return this.inputs.map((e) => ({ ...e, args: [...e.args] }));
  }

  installedPackages(): InstalledPackage[] {
    return this.pm.list();
  }

  // ---- internals ---------------------------------------------------------

  /** What `ps -A` shows: the system's daemons and services, then every running app under its package name. */
  private processes(): DeviceProcess[] {
    const row = (user: string, pid: number, ppid: number, name: string, rss: number): DeviceProcess => ({
      user, pid, ppid, vsz: name.includes('.') || name === 'system_server' ? 14_800_000 + rss : 2_200_000 + rss, rss, wchan: 'do_epoll_wait', state: 'S', name,
    });
    const pidAt = (i: number) => (i < 2 ? i + 1 : 300 + i * 25);
    const zygote = pidAt(SYSTEM_PROCESSES.findIndex(([, name]) => name === 'zygote64'));
    const system = SYSTEM_PROCESSES.map(([user, name], i) => {
      const appLike = name.includes('.') || name === 'system_server';
      return row(user, pidAt(i), i < 2 ? 0 : appLike ? zygote : 1, name, appLike ? 180_000 + i * 7_000 : 3_000 + i * 500);
    });
    const apps = this.pm.list()
      .filter((p) => this.am.isRunning(p.packageName))
      .map((p) => row(p.uid >= 10_000 ? `u0_a${p.uid % 100_000 - 10_000}` : 'system', this.am.process(p.packageName)!.pid, zygote, p.packageName, 120_000));
    return [...system, ...apps, ...this.programs.processes()];
  }

  private toolContext(): ToolContext {
    return {
      spec: this.spec,
      props: () => this.props(),
      setProp: (k, v) => (this.propOverrides[k] = v),
      pm: this.pm,
      am: this.am,
      logcat: this.logcat,
      battery: this.battery,
      settings: this.settings,
      wm: this.wm,
      screen: this.screen,
      recordInput: (e) => this.inputs.push(e),
      appOps: this.appOps,
      idleWhitelist: this.idleWhitelist,
      readFile: (p) => readHostFile(this.hostPath(p)),
      writeFile: (p, data) => {
        fs.mkdirSync(path.dirname(this.hostPath(p)), { recursive: true });
        fs.writeFileSync(this.hostPath(p), data);
      },
      reboot: (target) => setTimeout(() => this.reboot(target), 20),
      uptimeMs: () => this.proc.uptimeSeconds() * 1000,
    };
  }

  private createFileSystem(): void {
    for (const dir of ROOT_DIRS) fs.mkdirSync(path.join(this.fsRoot, dir), { recursive: true });
    for (const [link, target] of Object.entries(ROOT_LINKS)) {
      if (!fs.lstatSync(path.join(this.fsRoot, link), { throwIfNoEntry: false })) fs.symlinkSync(target, path.join(this.fsRoot, link));
    }
    // The commands' files, so `ls /system/bin` and `which` see what the shell runs; their content is never run.
    const commands = [...TOOL_NAMES, ...this.shellCommands.keys()].filter((n) => /^[a-z0-9]+$/.test(n) && !SHELL_ONLY.has(n));
    for (const name of [...commands, 'app_process', 'app_process32', ...(this.spec.cpu.abis.some((a) => a.includes('64')) ? ['app_process64'] : [])]) {
      const file = path.join(this.fsRoot, 'system', 'bin', name);
      // A state directory of an older labsim has links to host binaries here: replaced by plain files.
      if (fs.lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink()) fs.rmSync(file);
      if (!fs.existsSync(file)) fs.writeFileSync(file, '', { mode: 0o755 });
    }
    this.refreshGeneratedFiles();
  }
}
