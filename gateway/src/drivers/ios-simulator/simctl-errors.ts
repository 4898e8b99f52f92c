/** simctl failures as the user sees them: simctl's own reason, without CoreSimulator's preamble. */
import type { FailureCode } from '@devicelab/shared';
import { DeviceCommandError } from '../device-driver';

/** Runs a simctl call; its failure becomes a DeviceCommandError with simctl's own reason (stderr) for the user. */
export async function simctlCommand<T>(what: string, call: () => Promise<T>, code: FailureCode): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof DeviceCommandError) throw err;
    throw new DeviceCommandError(`simctl ${what} failed: ${messageOf(err)}`, code);
  }
}

/** simctl's reason without CoreSimulator's preamble line. */
export function messageOf(err: unknown): string {
  const e = err as { stderr?: string; message?: string };
  const text = (typeof e?.stderr === 'string' && e.stderr.trim() ? e.stderr : e?.message ?? String(err)).trim();
  return text.replace(/^An error was encountered processing the command \([^)]*\):\s*/, '').replace(/\s*\n\s*/g, '; ');
}
