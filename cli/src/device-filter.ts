/**
 * `--filter os=android,minOs=13,model=Pixel,free`: which devices a command means. The hub reads and matches it
 * (shared/src/device-filter.ts, one definition for the hub, its waiting line and this CLI): the CLI sends the text as
 * written (`filter=` on GET /Device and on a waiting retain) and shows the hub's refusal of a filter it cannot read.
 */

export const FILTER_KEYS = 'os=android|ios, minOs=13, maxOs=14, osVersion=14.1, model=<text>, name=<text>, '
  + 'id=<serial|guid>, formFactor=phone|tablet, app=<package>, free, online';

/** One or more `--filter` values as one filter text (comma separated parts). */
export function filterText(values: string[] | undefined): string {
  return (values ?? []).flatMap((value) => value.split(',')).map((part) => part.trim()).filter(Boolean).join(',');
}

/** The filter without its `free` and `online` parts: every device it could ever mean, busy or offline ones too. */
export function withoutState(text: string): string {
  return text.split(',').filter((part) => !/^\s*(free|online)\s*(=|$)/i.test(part)).join(',');
}
