/**
 * The documents `GET /Device/Metrics` returns: `default` is InfluxDB 1.x's query JSON
 * (`{"results":[{"statement_id":0,"series":[{"name","tags"?,"columns","values"}]}]}`), `csv` its transcoding in
 * the shape of InfluxDB's CSV output (`name,tags,<columns>`; a new header line whenever the columns change).
 */
import type { MetricsSeries } from './metrics-store';

export type MetricsFormat = 'default' | 'csv';

/** `csv` or `default`; any other value is treated as default (spec 4.3). */
export function parseFormat(text: string | undefined): MetricsFormat {
  return text?.trim().toLowerCase() === 'csv' ? 'csv' : 'default';
}

export function toInfluxJson(series: MetricsSeries[]): string {
  const statement = series.length > 0 ? { statement_id: 0, series } : { statement_id: 0 };
  return JSON.stringify({ results: [statement] });
}

export function toCsv(series: MetricsSeries[]): string {
  const lines: string[] = [];
  let header: string | undefined;
  for (const s of series) {
    const columns = ['name', 'tags', ...s.columns].map(csvField).join(',');
    if (columns !== header) lines.push((header = columns));
    const tags = s.tags ? Object.entries(s.tags).map(([k, v]) => `${k}=${v}`).join(',') : '';
    for (const row of s.values) lines.push([s.name, tags, ...row].map(csvField).join(','));
  }
  return lines.length > 0 ? `${lines.join('\r\n')}\r\n` : '';
}

function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The document's file name: the given name or `metrics-<device name>`, with the extension of the format (a
 * `.csv`/`.json` the client added is replaced). Path separators and control characters are taken out.
 */
export function documentFileName(requested: string | undefined, deviceName: string, format: MetricsFormat): string {
  const cleaned = (requested ?? `metrics-${deviceName}`).replace(/[\u0000-\u001f\u007f/\\"]/g, '_').trim()
    .replace(/\.(csv|json)$/i, '');
  return `${cleaned || 'metrics'}.${format === 'csv' ? 'csv' : 'json'}`;
}

/** `attachment; filename="<ascii>"; filename*=UTF-8''<encoded>` (RFC 6266), safe for any name. */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
