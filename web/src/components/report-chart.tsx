/**
 * A report drawn with uPlot beside its table (loaded on first use, like the metrics plot): a time series
 * (availability: devices online and in use per window) or bars of named totals (usage hours per device or user).
 */
import { useEffect, useRef } from 'preact/hooks';

export type ReportChartData =
  | { kind: 'time'; times: number[]; series: { label: string; values: number[] }[] }
  | { kind: 'bars'; names: string[]; label: string; values: number[] };

const PALETTE = ['--accent', '--free', '--busy'];

export function ReportChart({ data, title }: { data: ReportChartData; title: string }) {
  const box = useRef<HTMLDivElement>(null);
  const points = data.kind === 'time' ? data.times.length : data.names.length;
  useEffect(() => {
    const el = box.current;
    if (!el || points === 0) return;
    let plot: { destroy(): void } | undefined;
    let cancelled = false;
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([{ default: UPlot }]) => {
      if (cancelled) return;
      const style = getComputedStyle(document.documentElement);
      const color = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
      const ink = color('--ink', '#222');
      el.innerHTML = '';
      const width = Math.max(200, el.clientWidth);
      if (data.kind === 'time') {
        plot = new UPlot({
          width, height: 200, scales: { x: { time: true } },
          series: [{}, ...data.series.map((s, i) => ({ label: s.label, stroke: color(PALETTE[i % PALETTE.length], '#2451c7'), width: 2 }))],
          axes: [{ stroke: ink }, { stroke: ink }],
        }, [data.times, ...data.series.map((s) => s.values)], el);
      } else {
        const bars = UPlot.paths.bars!({ size: [0.6, 48] });
        plot = new UPlot({
          width, height: Math.max(160, 28 * data.names.length), scales: { x: { time: false } },
          series: [{}, { label: data.label, fill: color('--accent', '#2451c7'), stroke: color('--accent', '#2451c7'), paths: bars, points: { show: false } }],
          axes: [
            { stroke: ink, values: (_u: unknown, splits: number[]) => splits.map((i) => (Number.isInteger(i) ? data.names[i] ?? '' : '')) },
            { stroke: ink },
          ],
        }, [data.names.map((_, i) => i), data.values], el);
      }
    });
    return () => { cancelled = true; plot?.destroy(); };
  }, [data]);
  return <div ref={box} class="plot report-chart" role="img" aria-label={title} data-points={points} />;
}
