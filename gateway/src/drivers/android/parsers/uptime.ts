/** `/proc/uptime`: `<seconds since boot> <idle seconds summed over cores>`; the device's own clock for rates. */
export function parseUptime(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s/.exec(text.replace(/\r/g, '') + ' ');
  return m ? Number(m[1]) : undefined;
}
