/**
 * One simulated Android device: identity, sandboxed file system, fake tool
 * PATH, boot lifecycle and fault injection. Implements the DevicePort the
 * adbd protocol layer talks to.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Duplex } from 'node:stream';
import { DeviceSockets, type DeviceSocketAddress } from './device-sockets';
import type { AuthMode, DevicePort, DropFault, InstallOutcome, ShellIO } from '../adbd/device-port';
import { AdbdListener } from '../adbd/listener';
import { killTree } from '../adbd/services/shell';
import { ActivityManager, LaunchRecord } from './activity';
import { LogBuffer } from './logcat';
import { ShellHost, planShell, runShellScript } from './mini-shell';
import { InstalledPackage, PackageManager } from './packages';
import { ProcModel } from './procfs';
import { buildProps } from './props';
import type { AndroidDeviceSpec } from './spec';
import { Battery, BatteryState, InputEvent, Settings, WindowManager } from './system-services';
import { BufferedToolIO } from './tool-io';
import { ToolServer, installToolScripts } from './tool-server';
import { TOOL_NAMES, ToolContext, readHostFile, runTool } from './tools';

export type PowerState = 'booted' | 'booting' | 'rebooting' | 'stopped';

export interface DeviceTimings {
  /** Time the device is unreachable during a reboot. */
  rebootMs: number;
  /** Time after adbd is back until sys.boot_completed becomes 1. */
  bootCompleteMs: number;
}

/** Top-level device directories; absolute paths under them are mapped into the sandbox. */
const DEVICE_ROOTS = ['data', 'sdcard', 'storage', 'proc', 'sys', 'system', 'system_ext', 'vendor', 'product', 'mnt', 'cache', 'apex'];
/** toybox commands reachable as /system/bin/<name> (symlinks to the host's). */
const TOYBOX = ['sh', 'ls', 'cat', 'rm', 'mkdir', 'echo', 'sleep', 'id', 'df', 'ps', 'cp', 'mv', 'chmod', 'touch', 'grep', 'head', 'tail', 'wc', 'true', 'false', 'date', 'md5sum', 'sha256sum', 'stat'];

export class SimAndroidDevice extends EventEmitter implements DevicePort {
  readonly fsRoot: string;
  readonly toolDir: string;
  readonly listener: AdbdListener;
  private readonly toolServer: ToolServer;
  private readonly children = new Set<ChildProcess>();
  private readonly propOverrides: Record<string, string> = {};
  private readonly inputs: InputEvent[] = [];
  private readonly rootPattern: RegExp;
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
  /** Sockets programs on the device listen on (adb forward's far end). */
  readonly sockets = new DeviceSockets();

  constructor(readonly spec: AndroidDeviceSpec, readonly stateDir: string, readonly port: number, readonly timings: DeviceTimings) {
    super();
    this.fsRoot = path.join(stateDir, 'fs');
    this.toolDir = path.join(this.fsRoot, 'system', 'bin');
    this.rootPattern = new RegExp(`(^|[\\s'"=<>;|&(\`])/(${DEVICE_ROOTS.join('|')})(?=[/\\s'";|&)<>\`]|$)`, 'g');
    this.logcat = new LogBuffer(spec.timezone, this.bootAtMs);
    this.logcat.reset(this.bootAtMs);
    this.proc = new ProcModel(spec, this.bootAtMs);
    this.pm = new PackageManager(spec, this.fsRoot, this.logcat);
    this.am = new ActivityManager(spec, this.pm, this.logcat);
    this.battery = new Battery(spec.battery);
    this.settings = new Settings(spec);
    this.wm = new WindowManager(spec);
    this.listener = new AdbdListener(this, port);
    this.toolServer = new ToolServer(path.join(stateDir, 'tools.sock'), (tool, args, io) => runTool(this.toolContext(), tool, args, io), (a) =>
      a.split(this.fsRoot).join(''),
    );
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
    await this.toolServer.start();
    await this.listener.start();
    this.power = 'booted';
  }

  async stop(): Promise<void> {
    this.rebootTimers.forEach(clearTimeout);
    this.rebootTimers = [];
    this.killChildren();
    await this.listener.stop();
    await this.toolServer.stop();
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

  spawnShell(command: string): ChildProcess {
    const rewritten = command.replace(this.rootPattern, (_m, pre: string, root: string) => `${pre}${this.fsRoot}/${root}`);
    const child = spawn('/bin/sh', rewritten ? ['-c', rewritten] : [], {
      cwd: this.fsRoot,
      detached: true, // own process group, so killTree can take loops and their children down
      stdio: 'pipe',
      env: {
        PATH: `${this.toolDir}:/usr/bin:/bin`,
        HOME: this.fsRoot,
        TMPDIR: path.join(this.fsRoot, 'data', 'local', 'tmp'),
        ANDROID_DATA: '/data',
        ANDROID_ROOT: '/system',
        EXTERNAL_STORAGE: '/sdcard',
        LABSIM_TOOL_SOCK: path.join(this.stateDir, 'tools.sock'),
        LANG: 'C.UTF-8',
      },
    });
    this.children.add(child);
    child.on('close', () => this.children.delete(child));
    return child;
  }

  runShellInProcess(command: string, io: ShellIO): Promise<number> | null {
    const script = planShell(this.shellHost, command);
    return script && runShellScript(this.shellHost, script, io);
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

  hostPath(devicePath: string): string {
    if (devicePath.startsWith(this.fsRoot + '/') || devicePath === this.fsRoot) return devicePath;
    // Normalise inside the sandbox: "/../../etc/passwd" must not escape it.
    return path.join(this.fsRoot, path.posix.normalize('/' + devicePath));
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
    this.killChildren();
    void this.listener.stop();
    this.rebootTimers.push(
      setTimeout(() => {
        this.bootAtMs = Date.now();
        this.proc = new ProcModel(this.spec, this.bootAtMs);
        this.logcat.reset(this.bootAtMs);
        this.am.resetProcesses();
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

  private readonly shellHost: ShellHost = {
    toolNames: new Set<string>(TOOL_NAMES),
    runTool: (tool, args, io) => runTool(this.toolContext(), tool, args, io),
    hostPath: (p) => this.hostPath(p),
  };

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
      recordInput: (e) => this.inputs.push(e),
      readFile: (p) => readHostFile(this.hostPath(p)),
      writeFile: (p, data) => {
        fs.mkdirSync(path.dirname(this.hostPath(p)), { recursive: true });
        fs.writeFileSync(this.hostPath(p), data);
      },
      reboot: (target) => setTimeout(() => this.reboot(target), 20),
      uptimeMs: () => this.proc.uptimeSeconds() * 1000,
    };
  }

  /** Everything running on the device ends (reboot, stop): its processes and the sockets they listened on. */
  private killChildren(): void {
    for (const c of this.children) killTree(c);
    this.children.clear();
    this.sockets.closeAll();
  }

  private createFileSystem(): void {
    for (const dir of ['data/local/tmp', 'data/app', 'storage/emulated/0/Download', 'storage/emulated/0/DCIM', 'storage/emulated/0/Pictures', 'proc/net', 'sys', 'vendor', 'product']) {
      fs.mkdirSync(path.join(this.fsRoot, dir), { recursive: true });
    }
    const sdcard = path.join(this.fsRoot, 'sdcard');
    if (!fs.existsSync(sdcard)) fs.symlinkSync('storage/emulated/0', sdcard);
    installToolScripts(this.toolDir, TOOL_NAMES);
    for (const name of TOYBOX) {
      const link = path.join(this.toolDir, name);
      const target = ['/bin/' + name, '/usr/bin/' + name].find((t) => fs.existsSync(t));
      if (target && !fs.existsSync(link)) fs.symlinkSync(target, link);
    }
    this.refreshGeneratedFiles();
  }
}
