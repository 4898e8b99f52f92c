/**
 * Metrics of one device (GET /Device/Metrics, InfluxDB-style JSON) plotted with uPlot, loaded on first use. A range
 * (last 15 min, hour, day) or a marker (the `session` marker covers each retain, newest first); the marker periods
 * found are drawn as shaded bands.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { getText, query } from '../api/client';

interface Series { name: string; tags?: Record<string, string>; columns: string[]; values: (string | number | boolean | null)[][] }
interface InfluxDocument { results?: { series?: Series[] }[] }

const TABLES = ['sample', 'usb_hub', 'health_check'];
const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
const RANGES: Record<string, number> = { '15 min': 15 * 60_000, '1 hour': 3_600_000, '24 hours': 86_400_000 };

export function MetricsPanel({ deviceId }: { deviceId: string }) {
  const [table, setTable] = useState('sample');
  const [range, setRange] = useState('15 min');
  const [marker, setMarker] = useState('');
  const [field, setField] = useState('');
  const [doc, setDoc] = useState<Series[]>([]);
  const [bands, setBands] = useState<[number, number][]>([]);
  const [error, setError] = useState('');
  const plotBox = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let cancelled = false;
    const now = Date.now();
    const params = marker
      ? { id: deviceId, table, marker, markerLimit: 5 }
      : { id: deviceId, table, start: new Date(now - RANGES[range]).toISOString(), end: new Date(now).toISOString() };
    setError('');
    getText(`/Device/Metrics${query(params)}`).then((text) => {
      if (cancelled) return;
      const parsed = JSON.parse(text) as InfluxDocument & { isSuccess?: boolean; errorMessage?: string };
      if (parsed.isSuccess === false) { setDoc([]); setError(parsed.errorMessage ?? 'No metrics'); return; }
      setDoc(parsed.results?.[0]?.series ?? []);
    }, (err: Error) => !cancelled && setError(err.message));
    return () => { cancelled = true; };
  }, [deviceId, table, range, marker]);

  const numericFields = numericColumns(doc);
  const shown = numericFields.includes(field) ? field : numericFields[0] ?? '';
  const plotted = pointsOf(doc, shown);

  // The marker periods (the chosen marker, else each retain's `session`), for the bands; none is fine.
  useEffect(() => {
    if (!shown) return;
    let cancelled = false;
    getText(`/Device/Metrics${query({ id: deviceId, table, marker: marker || 'session', markerLimit: 20, fields: shown })}`)
      .then((text) => !cancelled && setBands(markerBands(text)), () => !cancelled && setBands([]));
    return () => { cancelled = true; };
  }, [deviceId, table, marker, shown, doc]);

  useEffect(() => {
    const box = plotBox.current;
    if (!box || !shown) return;
    let plot: { destroy(): void } | undefined;
    let cancelled = false;
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([{ default: UPlot }]) => {
      if (cancelled) return;
      const [xs, ys] = plotted;
      const style = getComputedStyle(document.documentElement);
      const ink = style.getPropertyValue('--ink').trim() || '#222';
      const accent = style.getPropertyValue('--accent').trim() || '#2563eb';
      box.innerHTML = '';
      plot = new UPlot({
        width: Math.max(200, box.clientWidth), height: 260,
        series: [{}, { label: shown, stroke: accent, width: 2 }],
        scales: { x: { time: true } },
        axes: [{ stroke: ink }, { stroke: ink, size: 64, values: (_u: unknown, splits: number[]) => splits.map((v) => compact.format(v)) }],
        hooks: {
          drawClear: [(u) => {
            // Marker periods as bands behind the line.
            const ctx = u.ctx;
            ctx.save();
            ctx.fillStyle = 'rgba(245, 158, 11, 0.18)';
            for (const [from, to] of bands) {
              const x0 = u.valToPos(from / 1000, 'x', true);
              const x1 = u.valToPos(to / 1000, 'x', true);
              ctx.fillRect(x0, u.bbox.top, Math.max(2, x1 - x0), u.bbox.height);
            }
            ctx.restore();
          }],
        },
      }, [xs, ys], box);
    });
    return () => { cancelled = true; plot?.destroy(); };
  }, [doc, shown, bands]);

  return (
    <section class="card metrics">
      <h2>Metrics</h2>
      <div class="toolbar">
        <label>Table<select value={table} onChange={(e) => setTable((e.target as HTMLSelectElement).value)}>
          {TABLES.map((t) => <option key={t}>{t}</option>)}</select></label>
        <label>Range<select value={range} disabled={!!marker} onChange={(e) => setRange((e.target as HTMLSelectElement).value)}>
          {Object.keys(RANGES).map((r) => <option key={r}>{r}</option>)}</select></label>
        <label>Marker<input value={marker} placeholder="e.g. session" onChange={(e) => setMarker((e.target as HTMLInputElement).value.trim())} /></label>
        <label>Field<select value={shown} onChange={(e) => setField((e.target as HTMLSelectElement).value)}>
          {numericFields.map((f) => <option key={f}>{f}</option>)}</select></label>
        <span class="muted">{bands.length} marker band(s)</span>
      </div>
      {error && <p class="muted">{error}</p>}
      {!error && !shown && <p class="muted">No numeric samples in this range yet.</p>}
      <div ref={plotBox} class="plot" role="img" aria-label={shown ? `Plot of ${shown}` : 'No plot'}
        data-points={plotted[1].filter((y) => y !== null).length} data-lines={lineCount(plotted[1])} />
    </section>
  );
}

function numericColumns(series: Series[]): string[] {
  const names = new Set<string>();
  for (const s of series) {
    s.columns.forEach((column, i) => {
      if (column !== 'time' && s.values.some((row) => typeof row[i] === 'number')) names.add(column);
    });
  }
  return [...names];
}

function pointsOf(series: Series[], field: string): [number[], (number | null)[]] {
  const points: [number, number | null][] = [];
  for (const s of series) {
    const t = s.columns.indexOf('time');
    const f = s.columns.indexOf(field);
    if (t < 0 || f < 0) continue;
    for (const row of s.values) {
      const value = row[f];
      points.push([Date.parse(String(row[t])) / 1000, typeof value === 'number' ? value : null]);
    }
  }
  points.sort((a, b) => a[0] - b[0]);
  return withGapsBroken(points);
}

/**
 * A null between two samples much further apart than the usual sampling step (between two marker periods, or while
 * the gateway was away), so that the line breaks there instead of drawing a slope over hours without samples.
 */
function withGapsBroken(points: [number, number | null][]): [number[], (number | null)[]] {
  const steps = points.slice(1).map((p, i) => p[0] - points[i][0]).filter((d) => d > 0).sort((a, b) => a - b);
  const usualStep = steps[Math.floor(steps.length / 2)] ?? 0;
  const xs: number[] = [];
  const ys: (number | null)[] = [];
  points.forEach(([x, y], i) => {
    if (i > 0 && usualStep > 0 && x - points[i - 1][0] > GAP_STEPS * usualStep) {
      xs.push((x + points[i - 1][0]) / 2);
      ys.push(null);
    }
    xs.push(x);
    ys.push(y);
  });
  return [xs, ys];
}

/** Samples further apart than this many usual steps are not joined by the line. */
const GAP_STEPS = 5;

/** How many separate lines the plot draws: runs of values between nulls. */
const lineCount = (ys: (number | null)[]): number => ys.filter((y, i) => y !== null && (i === 0 || ys[i - 1] === null)).length;

/** Each series of a marker query is one marker period, named by its `markerStart`/`markerEnd` tags. */
function markerBands(text: string): [number, number][] {
  try {
    const doc = JSON.parse(text) as InfluxDocument;
    return (doc.results?.[0]?.series ?? []).map((s) => {
      const from = Date.parse(s.tags?.markerStart ?? '');
      const to = s.tags?.markerEnd ? Date.parse(s.tags.markerEnd) : Date.now(); // an open marker runs until now
      return [from, to] as [number, number];
    }).filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b));
  } catch {
    return [];
  }
}
