/**
 * The old-style (NeXTSTEP) property list text that `simctl listapps` prints: Foundation's `-description` of a
 * dictionary, 4-space indents, `key = value;`, strings quoted unless they are plain words, and a nested
 * collection printed after ` = ` with its own indent in front (`"com.apple.Maps" =     {`), as Foundation does.
 */
export type OpenStepValue = string | OpenStepValue[] | { [key: string]: OpenStepValue };

export function formatOpenStep(value: OpenStepValue): string {
  return `${format(value, '')}\n`;
}

function format(value: OpenStepValue, indent: string): string {
  const inner = `${indent}    `;
  const nested = (v: OpenStepValue) => (typeof v === 'string' ? quote(v) : `${inner}${format(v, inner)}`);
  if (typeof value === 'string') return quote(value);
  if (Array.isArray(value)) {
    return `(\n${value.map((v) => `${inner}${nested(v)}`).join(',\n')}${value.length ? '\n' : ''}${indent})`;
  }
  const lines = Object.keys(value).sort().map((key) => `${inner}${quote(key)} = ${nested(value[key])};`);
  return `{\n${lines.join('\n')}${lines.length ? '\n' : ''}${indent}}`;
}

function quote(text: string): string {
  if (/^[A-Za-z0-9_$]+$/.test(text)) return text;
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}
