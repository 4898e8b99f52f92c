/**
 * `getprop` output: `[key]: [value]` per line, sorted; a line that does not start with `[` continues the
 * previous value (vendor props with embedded newlines). Returns properties in output order.
 */
import { lines } from './text';

export interface Property { name: string; value: string }

const LINE = /^\[([^\]]+)\]: \[(.*)$/;

export function parseGetprop(text: string): Property[] {
  const props: Property[] = [];
  // The value's closing `]` may be on a later line; collect raw value text then strip the final `]`.
  let open: { name: string; raw: string[] } | undefined;
  const close = () => {
    if (!open) return;
    const raw = open.raw.join('\n');
    props.push({ name: open.name, value: raw.endsWith(']') ? raw.slice(0, -1) : raw });
    open = undefined;
  };
  for (const line of lines(text)) {
    const m = LINE.exec(line);
    if (m) {
      close();
      open = { name: m[1], raw: [m[2]] };
    } else if (open) {
      open.raw.push(line);
    }
  }
  close();
  return props;
}

/** Name -> value; the first occurrence of a key wins. */
export function propertyMap(props: Property[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const p of props) if (!map.has(p.name)) map.set(p.name, p.value);
  return map;
}
