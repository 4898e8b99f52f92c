/** Entry to the in-process device shell: `adb shell <command>`, `exec:<command>` and the interactive `adb shell`. */
import type { ShellIO } from '../../adbd/device-port';
import { BUILTINS, SHELL_ONLY, runInteractive } from './builtins';
import { CommandFn, ShellHost, ShellSession } from './interpreter';
import { bufferInput, sinkOutput } from './streams';
import { FILE_COMMANDS } from './toybox-files';
import { TEXT_COMMANDS } from './toybox-text';
import { DeviceSystem, systemCommands } from './toybox-system';

export type { DeviceProcess, DeviceSystem } from './toybox-system';
export { SHELL_ONLY };
export type DeviceShellHost = ShellHost & DeviceSystem;

/** Every command the device's shell knows besides the device tools (`getprop`, `pm`, ...). */
export function shellCommands(system: DeviceSystem): ReadonlyMap<string, CommandFn> {
  return new Map(Object.entries({ ...FILE_COMMANDS, ...TEXT_COMMANDS, ...systemCommands(system), ...BUILTINS }));
}

/** Runs `command` (or, when empty, the commands arriving on the input) and resolves with the exit status. */
export async function runDeviceShell(host: DeviceShellHost, commands: ReadonlyMap<string, CommandFn>, command: string, io: ShellIO): Promise<number> {
  const session = new ShellSession(host, commands, io.gone);
  const env = session.newEnv();
  const streams = { stdin: io.input ?? bufferInput(Buffer.alloc(0)), stdout: sinkOutput(io.out), stderr: sinkOutput(io.err) };
  try {
    if (command.trim() === '') return await runInteractive(env, { name: 'sh', args: [], env, io: streams, session });
    return await session.run(command, env, streams);
  } catch (e) {
    if (e instanceof Error) throw e;
    return 255; // the session ended under a running command
  } finally {
    streams.stdin.close();
  }
}
