/**
 * toybox `df /data`: `Filesystem 1K-blocks Used Available Use% Mounted on`. diskSpace = 1K-blocks * 1024,
 * diskSpaceUsed = (1K-blocks - Available) * 1024 (what users perceive; reserved blocks count as used).
 */
import { lines } from './text';

interface DiskInfo { diskSpace: number; diskSpaceUsed: number }

export function parseDf(text: string, mount = '/data'): DiskInfo | undefined {
  const rows = lines(text).map((l) => l.trim().split(/\s+/)).filter((f) => f.length >= 6 && /^\d+$/.test(f[1]));
  const row = rows.find((f) => f[f.length - 1] === mount) ?? rows[0];
  if (!row) return undefined;
  const total = Number(row[1]);
  const available = Number(row[3]);
  if (!Number.isFinite(total) || !Number.isFinite(available)) return undefined;
  return { diskSpace: total * 1024, diskSpaceUsed: Math.max(0, total - available) * 1024 };
}
