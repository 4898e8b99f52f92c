/**
 * `dumpsys gfxinfo <package>` of a simulated app process, in the format of the device's Android release
 * (device-data.md 1.8: OpenGL era <= 8.x with the cache table, Skia 9-11, 12+ with `(legacy)` lines and
 * per-window blocks after `Profile data in ms:`). Counters are closed-form, monotonically increasing functions
 * of the process age; a package without a process prints only the header; 0 frames read as the 4950ms bucket.
 */
import type { AppProcess } from './activity';

/** HWUI frame-time buckets (ms): 5..32 by 1, then by 2 to 48, then 53..150 by ~4-5, then 50ms steps. */
const BUCKETS = [
  ...Array.from({ length: 28 }, (_, i) => 5 + i),
  ...Array.from({ length: 8 }, (_, i) => 34 + i * 2),
  53, 57, 61, 65, 69, 73, 77, 81, 85, 89, 93, 97, 101, 105, 109, 113, 117, 121, 125, 129, 133, 150,
  ...Array.from({ length: 97 }, (_, i) => 200 + i * 50),
];

function bucket(ms: number): number {
  return BUCKETS.find((b) => b >= ms) ?? 4950;
}

interface FrameStats {
  frames: number;
  janky: number;
  percentiles: [number, number, number, number];
  missedVsync: number;
  highInputLatency: number;
  slowUiThread: number;
  slowBitmapUploads: number;
  slowIssueDraw: number;
  deadlineMissed: number;
}

/** Frame counters after `ageSeconds` of process life (~24 frames/s on average, ~6 % janky). */
function frameStats(ageSeconds: number): FrameStats {
  const t = Math.max(0, ageSeconds);
  const frames = Math.floor(24 * t + 40 * (1 - Math.cos(t / 11)) + Math.min(60, t * 30));
  const janky = Math.floor(frames * 0.058);
  if (frames === 0) {
    return { frames: 0, janky: 0, percentiles: [4950, 4950, 4950, 4950], missedVsync: 0, highInputLatency: 0, slowUiThread: 0, slowBitmapUploads: 0, slowIssueDraw: 0, deadlineMissed: 0 };
  }
  return {
    frames,
    janky,
    percentiles: [bucket(7), bucket(14 + (t % 3)), bucket(21 + (t % 5)), bucket(48 + (t % 40))],
    missedVsync: Math.floor(janky * 0.2),
    highInputLatency: Math.floor(frames * 0.09),
    slowUiThread: Math.floor(janky * 0.4),
    slowBitmapUploads: Math.floor(janky * 0.05),
    slowIssueDraw: Math.floor(janky * 0.5),
    deadlineMissed: janky,
  };
}

const pct = (part: number, whole: number) => (whole > 0 ? ((part * 100) / whole).toFixed(2) : '0.00');

function statsLines(s: FrameStats, sdk: number): string[] {
  const [p50, p90, p95, p99] = s.percentiles;
  const lines = [`Total frames rendered: ${s.frames}`, `Janky frames: ${s.janky} (${pct(s.janky, s.frames)}%)`];
  if (sdk >= 31) {
    const legacy = Math.floor(s.janky * 1.4);
    lines.push(`Janky frames (legacy): ${legacy} (${pct(legacy, s.frames)}%)`);
  }
  if (sdk >= 26) lines.push(`50th percentile: ${p50}ms`);
  lines.push(`90th percentile: ${p90}ms`, `95th percentile: ${p95}ms`, `99th percentile: ${p99}ms`,
    `Number Missed Vsync: ${s.missedVsync}`, `Number High input latency: ${s.highInputLatency}`,
    `Number Slow UI thread: ${s.slowUiThread}`, `Number Slow bitmap uploads: ${s.slowBitmapUploads}`,
    `Number Slow issue draw commands: ${s.slowIssueDraw}`);
  if (sdk >= 28) lines.push(`Number Frame deadline missed: ${s.deadlineMissed}`);
  if (sdk >= 31) lines.push(`Number Frame deadline missed (legacy): ${s.deadlineMissed}`);
  if (sdk >= 28) {
    lines.push(`HISTOGRAM: 5ms=${Math.floor(s.frames * 0.3)} 6ms=${Math.floor(s.frames * 0.2)} 7ms=${Math.floor(s.frames * 0.1)} 4950ms=0`,
      `50th gpu percentile: ${s.frames ? 4 : 4950}ms`, `90th gpu percentile: ${s.frames ? 7 : 4950}ms`,
      `95th gpu percentile: ${s.frames ? 9 : 4950}ms`, `99th gpu percentile: ${s.frames ? 14 : 4950}ms`,
      `GPU HISTOGRAM: 1ms=${Math.floor(s.frames * 0.1)} 2ms=${Math.floor(s.frames * 0.25)} 4950ms=0`);
  }
  return lines;
}

/** OpenGL-era cache table: [name, current, total]. */
function openGlCaches(frames: number): Array<[string, number, number]> {
  const grow = (max: number, per: number) => Math.min(max, frames * per);
  return [
    ['TextureCache', grow(24_000_000, 640), 75497472], ['LayerCache', 0, 50331648], ['RenderBufferCache', 0, 8388608],
    ['GradientCache', grow(16384, 4), 1048576], ['PathCache', grow(1_200_000, 32), 33554432], ['TessellationCache', grow(65536, 8), 1048576],
    ['TextDropShadowCache', 0, 6291456], ['PatchCache', grow(8448, 8), 131072], ['FontRenderer 0 A8', 1048576, 1048576],
    ['FontRenderer 0 RGBA', 0, 0], ['FontRenderer 0 total', 1048576, 1048576],
  ];
}

interface GfxinfoInput {
  sdk: number;
  packageName: string;
  /** The package's launcher activity (window names), when it has one. */
  activity?: string;
  process?: AppProcess;
  uptimeMs: number;
  now?: number;
}

export function renderGfxinfo(input: GfxinfoInput): string {
  const { sdk, packageName, process } = input;
  const now = input.now ?? Date.now();
  const out = ['Applications Graphics Acceleration Info:', `Uptime: ${Math.floor(input.uptimeMs)} Realtime: ${Math.floor(input.uptimeMs)}`, ''];
  if (!process) return out.join('\n') + '\n';
  const s = frameStats((now - process.startMs) / 1000);
  const statsSince = `Stats since: ${Math.floor((input.uptimeMs - (now - process.startMs)) * 1e6)}ns`;
  out.push(`** Graphics info for pid ${process.pid} [${packageName}] **`, '', statsSince, ...statsLines(s, sdk), '');
  if (sdk <= 27) {
    const caches = openGlCaches(s.frames);
    out.push('Caches:', 'Current memory usage / total memory usage (bytes):');
    for (const [name, current, total] of caches.slice(0, 2)) out.push(`  ${name.padEnd(20)}${String(current).padStart(8)} / ${String(total).padStart(8)}${name === 'LayerCache' ? ' (numLayers = 0)' : ''}`);
    out.push('  Layers total          0 (numLayers = 0)');
    for (const [name, current, total] of caches.slice(2)) out.push(`  ${name.padEnd(20)}${String(current).padStart(8)} / ${String(total).padStart(8)}`);
    out.push('Other:', `  ${'FboCache'.padEnd(20)}${'0'.padStart(8)} / ${'0'.padStart(8)}`);
    const total = caches.reduce((sum, c) => sum + (c[0].endsWith('total') ? 0 : c[1]), 0);
    out.push('Total memory usage:', `  ${total} bytes, ${(total / 1048576).toFixed(2)} MB`, '');
  } else {
    const gpu = 8_000_000 + Math.min(26_000_000, s.frames * 900);
    out.push('Pipeline=Skia (OpenGL)');
    if (sdk >= 34) out.push('Memory policy:', '  Max surface area: 3389760', '  Max resource usage: 162.71MB (x48)', '  Background retention: 50% (altUiHidden = true)', '  GPU Context timeout: 10', 'Contexts: 1 (stopped = 0)');
    out.push('CPU Caches:', '  Glyph Cache: 41.78 KB (1 entry)', '  Glyph Count: 13 ', 'GPU Caches:', '  Image:', `    Texture: ${(gpu / 4 / 1048576).toFixed(2)} MB (11 entries)`,
      '  Scratch:', `    RenderTarget: ${((gpu * 3) / 4 / 1048576).toFixed(2)} MB (7 entries)`,
      'Other Caches:', '                         Current / Maximum', '  Layers Total           0.00 KB (numLayers = 0)',
      'Total GPU memory usage:', `  ${gpu} bytes, ${(gpu / 1048576).toFixed(2)} MB (${((gpu * 0.9) / 1048576).toFixed(2)} MB is purgeable)`, '');
  }
  // Per-window blocks repeat the keys with the window's own (smaller) numbers: parsers must take the first.
  const window = `${packageName}/${input.activity ?? `${packageName}.MainActivity`}`;
  const w = frameStats(Math.max(0, (now - process.startMs) / 1000 - 2));
  out.push('Profile data in ms:', '', `\t${window}/android.view.ViewRootImpl@e418670 (visibility=0)`);
  if (sdk >= 31) out.push(`Window: ${window}`);
  out.push(statsSince, ...statsLines(w, sdk).slice(0, 3), '', 'View hierarchy:', '', `  ${window}/android.view.ViewRootImpl@e418670`,
    '  224 views, 212.96 kB of display lists', '', '', 'Total ViewRootImpl: 1', 'Total Views:        224', 'Total DisplayList:  212.96 kB');
  return out.join('\n') + '\n';
}
