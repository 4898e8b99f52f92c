/**
 * `scaling_cur_freq` files (one integer in kHz each; one per cpufreq policy, i.e. per CPU cluster). On
 * big.LITTLE SoCs cpu0 is a LITTLE core, so the fastest cluster's frequency is the meaningful single number.
 * Returns MHz, or undefined when no file could be read (offline cores, no cpufreq driver).
 */
import { lines } from './text';

export function parseCpuFrequencyMhz(text: string): number | undefined {
  const khz = lines(text).map((l) => l.trim()).filter((l) => /^\d+$/.test(l)).map(Number).filter((v) => v > 0);
  if (khz.length === 0) return undefined;
  return Math.max(...khz) / 1000;
}
