/**
 * What the adbd protocol layer needs from a simulated device.
 *
 * The transport and the services only talk to this interface, so the wire
 * protocol code knows nothing about Android state (props, packages, ...).
 */
import type { Duplex } from 'node:stream';
import type { DeviceSocketAddress } from '../android/device-sockets';

export type AuthMode =
  /** Reply to CNXN at once (adb over TCP never requires AUTH). */
  | 'none'
  /** Ask for a signature, then accept the public key ("Allow USB debugging" tapped). */
  | 'accept'
  /** Ask for a signature forever: adb shows the device as `unauthorized`. */
  | 'reject';

export interface InstallOutcome {
  /** Text the package manager prints, e.g. "Success\n" or "Failure [...]\n". */
  output: string;
  ok: boolean;
}

/** One-shot fault: drop the TCP connection at some point. */
export interface DropFault {
  /** Drop when the host opens its next stream. */
  onNextStream?: boolean;
  /** Drop after the device has sent this many more payload bytes. */
  afterBytes?: number;
}

/** Output of a command run inside the simulator process. */
export interface ShellIO {
  /** What the host sends (stdin); none for services without input. */
  input?: { read(): Promise<Buffer | null>; close(): void };
  out(data: Buffer): void;
  err(data: Buffer): void;
  /** Resolves when the host went away. */
  readonly gone: Promise<void>;
}

export interface DevicePort {
  /** CNXN banner, e.g. `device::ro.product.name=..;features=...`. */
  banner(): string;
  authMode(): AuthMode;
  /** Consumes a pending drop fault (returns it once, then undefined). */
  takeDropFault(): DropFault | undefined;
  /**
   * Runs `command` in the device's shell (the commands arriving on the input when empty) and resolves with its
   * exit status. The shell is interpreted inside the simulator: it reaches no host program and no host file.
   */
  runShell(command: string, io: ShellIO): Promise<number>;
  /** Streamed install (abb_exec / exec:cmd package install -S): the complete APK bytes and pm arguments. */
  installStream(apk: Buffer, pmArgs: string[]): Promise<InstallOutcome>;
  /** Runs a device tool in-process (used by abb_exec for non-install commands). */
  runTool(tool: string, args: string[]): Promise<{ stdout: string; stderr: string; code: number }>;
  /** The host file of a device path (/sdcard/x), links followed inside the device (the last one only if asked). */
  hostPath(devicePath: string, followLast?: boolean): string;
  /** `hostPath` for a file the shell user (adbd's) writes: an error when the device refuses it that write. */
  writableHostPath(devicePath: string, followLast?: boolean): string;
  /** Refreshes generated files (/proc, /sys) before a service reads them. */
  refreshGeneratedFiles(): void;
  /** Connects to a socket a program on the device listens on (`tcp:`, `localabstract:`); undefined when none does. */
  connectSocket(address: DeviceSocketAddress): Duplex | undefined;
  /** `reboot:` service; the argument is e.g. "" or "bootloader". */
  reboot(target: string): void;
}
