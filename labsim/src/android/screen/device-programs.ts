/**
 * Programs the shell starts from files pushed to the device: minicap and minitouch (native, checked as the loader
 * checks them) and minicap's Java flavour through `app_process`. A running program is a process of the shell user
 * (`ps` shows it, `kill` ends it) that lives until it is killed, its shell goes away or the device goes down.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DeviceFs } from '../device-fs';
import type { DeviceSockets } from '../device-sockets';
import type { AndroidDeviceSpec } from '../spec';
import type { DeviceProcess } from '../shell';
import type { ToolIO } from '../tool-io';
import { ZipReader } from '../../apk/zip';
import type { DeviceScreen } from './device-screen';
import { abiFor, identifyProgram, machineName, minicapLibrarySdks, readElfHeader } from './elf';
import { runMinicap } from './minicap-command';
import { runMinitouch } from './minitouch-command';

const SH = '/system/bin/sh';
/** Larger files are not read to find out what they are. */
const MAX_PROGRAM_BYTES = 32 * 1024 * 1024;
const APP_PROCESS = new Set(['app_process', 'app_process32', 'app_process64', '/system/bin/app_process', '/system/bin/app_process32', '/system/bin/app_process64']);

export interface ProgramContext {
  spec: AndroidDeviceSpec;
  files: DeviceFs;
  sockets: DeviceSockets;
  screen: DeviceScreen;
  io: ToolIO;
  pid: number;
  /** Resolves when the process is killed. */
  killed: Promise<void>;
}

interface Running {
  name: string;
  kill(): void;
}

export class DevicePrograms {
  private readonly running = new Map<number, Running>();
  private nextPid = 12_000;

  constructor(private readonly spec: AndroidDeviceSpec, private readonly files: DeviceFs, private readonly sockets: DeviceSockets, private readonly screen: DeviceScreen) {}

  processes(): DeviceProcess[] {
    return [...this.running].map(([pid, p]) => ({ user: 'shell', pid, ppid: 4242, vsz: 2_300_000, rss: 9_800, wchan: 'do_sys_poll', state: 'S', name: p.name }));
  }

  kill(pid: number): boolean {
    const p = this.running.get(pid);
    p?.kill();
    return p !== undefined;
  }

  /** The device went down: every program ends. */
  killAll(): void {
    for (const p of [...this.running.values()]) p.kill();
  }

  /** Runs `word` when it is a program this device simulates; undefined hands it back to the shell. */
  run(word: string, args: string[], vars: ReadonlyMap<string, string>, io: ToolIO): Promise<number> | undefined {
    if (APP_PROCESS.has(word)) return this.appProcess(args, vars, io);
    if (!word.startsWith('/') || /^\/(system|vendor|product|system_ext|apex|odm)\//.test(word)) return undefined;
    const data = this.readExecutable(word);
    if (!data) return undefined;
    const elf = readElfHeader(data);
    if (!elf) return undefined;
    const abi = abiFor(this.spec.cpu.abis, elf.machine);
    if (!abi || (elf.elfClass === 2 && !this.spec.cpu.abis.some((a) => a.includes('64')))) {
      io.err(`${SH}: ${word}: not executable: ${elf.elfClass === 2 ? '64' : '32'}-bit ELF file\n`);
      return Promise.resolve(126);
    }
    if (elf.type === 2 && this.spec.sdk >= 21) {
      io.err('error: only position independent executables (PIE) are supported.\n');
      return Promise.resolve(1);
    }
    const kind = identifyProgram(data);
    if (kind === 'minicap') {
      const problem = this.minicapLibraryProblem(word, abi, elf.machine, vars);
      if (problem) {
        io.err(`CANNOT LINK EXECUTABLE "${word}": ${problem}\n`);
        return Promise.resolve(1);
      }
      return this.start('minicap', io, (ctx) => runMinicap(ctx, args));
    }
    if (kind === 'minitouch') return this.start('minitouch', io, (ctx) => runMinitouch(ctx, args));
    // A native program labsim does not simulate runs to completion without doing anything.
    return Promise.resolve(0);
  }

  private readExecutable(devicePath: string): Buffer | undefined {
    try {
      const host = this.files.hostPath(devicePath);
      const st = fs.statSync(host);
      if (!st.isFile() || (st.mode & 0o111) === 0 || st.size > MAX_PROGRAM_BYTES) return undefined;
      return fs.readFileSync(host);
    } catch {
      return undefined;
    }
  }

  /** Why the loader cannot link minicap against the `minicap.so` it finds on LD_LIBRARY_PATH, or undefined. */
  private minicapLibraryProblem(word: string, abi: string, machine: number, vars: ReadonlyMap<string, string>): string | undefined {
    const dirs = (vars.get('LD_LIBRARY_PATH') ?? '').split(':').filter((d) => d.startsWith('/'));
    let library: Buffer | undefined;
    let libraryPath = '';
    for (const dir of dirs) {
      libraryPath = path.posix.join(dir, 'minicap.so');
      try {
        const host = this.files.hostPath(libraryPath);
        if (fs.statSync(host).size <= MAX_PROGRAM_BYTES) library = fs.readFileSync(host);
      } catch {
        continue;
      }
      if (library) break;
    }
    if (!library) return `library "minicap.so" not found${this.spec.sdk >= 29 ? ': needed by main executable' : ''}`;
    const elf = readElfHeader(library);
    if (!elf) return `"${libraryPath}" has bad ELF magic`;
    if (elf.machine !== machine) return `"${libraryPath}" is for ${machineName(elf.machine)} instead of ${machineName(machine)}`;
    const sdks = minicapLibrarySdks(abi, library);
    if (sdks && !sdks.includes(this.spec.sdk)) {
      return `cannot locate symbol "_ZN7android21SurfaceComposerClient13createDisplayERKNS_7String8Eb" referenced by "${libraryPath}"...`;
    }
    return undefined;
  }

  /** `app_process <dir> <class> [args]` with CLASSPATH: minicap.apk's io.devicefarmer.minicap.Main, nothing else. */
  private appProcess(args: string[], vars: ReadonlyMap<string, string>, io: ToolIO): Promise<number> {
    // Java options (-Xmx..., --nice-name=...) come first, then the command's directory and the class.
    const dirAt = args.findIndex((a) => !a.startsWith('-'));
    const className = dirAt >= 0 ? args[dirAt + 1] ?? '' : '';
    const classPath = vars.get('CLASSPATH') ?? '';
    if (className === 'io.devicefarmer.minicap.Main' && this.hasClass(classPath, 'Lio/devicefarmer/minicap/Main;')) {
      return this.start('app_process', io, (ctx) => runMinicap(ctx, args.slice(dirAt + 2)));
    }
    io.err(`Error: Could not find class '${className}'\njava.lang.ClassNotFoundException: Didn't find class "${className}" on path: DexPathList[[zip file "${classPath}"],nativeLibraryDirectories=[/system/lib64, /system_ext/lib64]]\n`);
    return Promise.resolve(1);
  }

  /** Whether an APK on the CLASSPATH holds a class (its name appears in one of the APK's dex files). */
  private hasClass(classPath: string, descriptor: string): boolean {
    return classPath.split(':').some((entry) => {
      try {
        const host = this.files.hostPath(entry);
        if (fs.statSync(host).size > 64 * 1024 * 1024) return false;
        const zip = new ZipReader(fs.readFileSync(host));
        return zip.entries.filter((e) => /^classes\d*\.dex$/.test(e.name) && e.size <= 64 * 1024 * 1024).some((e) => zip.read(e).includes(descriptor));
      } catch {
        return false;
      }
    });
  }

  private start(name: string, io: ToolIO, body: (ctx: ProgramContext) => Promise<number>): Promise<number> {
    const pid = this.nextPid++;
    let kill!: () => void;
    const killed = new Promise<void>((resolve) => (kill = resolve));
    let wasKilled = false;
    this.running.set(pid, { name, kill: () => ((wasKilled = true), kill()) });
    // The program ends with its shell (SIGHUP), as one started by `adb shell` does.
    void io.gone.then(() => kill());
    return body({ spec: this.spec, files: this.files, sockets: this.sockets, screen: this.screen, io, pid, killed })
      .then((code) => (wasKilled ? 143 : code))
      .finally(() => this.running.delete(pid));
  }
}
