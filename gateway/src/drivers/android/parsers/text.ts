/** Text helpers shared by the parsers: adb shell v1 may deliver `\r\n`, so every parser starts here. */

/** Strips `\r` and splits into lines (the trailing empty line, if any, is dropped). */
export function lines(text: string): string[] {
  const all = text.replace(/\r/g, '').split('\n');
  if (all.length > 0 && all[all.length - 1] === '') all.pop();
  return all;
}

/** Marker prefix of batched shell calls: `echo @@name; cmd; echo @@other; cmd2`. */
const SECTION_MARKER = '@@';

/** Builds one shell line that runs each command after an `echo @@<name>` marker. */
export function batchScript(commands: Record<string, string>): string {
  return Object.entries(commands).map(([name, cmd]) => `echo ${SECTION_MARKER}${name}; ${cmd}`).join('; ');
}

/** Splits the output of `batchScript` back into one text per section name. Text before the first marker is dropped. */
export function splitSections(text: string): Map<string, string> {
  const sections = new Map<string, string>();
  let current: string | undefined;
  let buffer: string[] = [];
  for (const line of lines(text)) {
    const m = /^@@([A-Za-z0-9_.:-]+)$/.exec(line);
    if (m) {
      if (current !== undefined) sections.set(current, buffer.join('\n'));
      current = m[1];
      buffer = [];
    } else if (current !== undefined) {
      buffer.push(line);
    }
  }
  if (current !== undefined) sections.set(current, buffer.join('\n'));
  return sections;
}
