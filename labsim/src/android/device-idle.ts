/** `dumpsys deviceidle`: the Doze whitelist apps are exempted by (the UiAutomator2 driver adds its packages). */

/** `dumpsys deviceidle whitelist [+pkg|-pkg ...]`: the packages exempted from Doze. */
export function deviceIdle(args: string[], whitelist: Set<string>, installed: (pkg: string) => boolean): { out: string; code: number } {
  if (args[0] !== 'whitelist') return { out: '', code: 0 };
  const changes = args.slice(1);
  if (!changes.length) return { out: [...whitelist].map((p) => `user,${p},10000\n`).join(''), code: 0 };
  let out = '';
  for (const change of changes) {
    const pkg = change.slice(1);
    if (change.startsWith('+')) {
      if (!installed(pkg)) out += `Unknown package: ${pkg}\n`;
      else {
        whitelist.add(pkg);
        out += `Added: ${pkg}\n`;
      }
    } else if (change.startsWith('-')) {
      out += whitelist.delete(pkg) ? `Removed: ${pkg}\n` : `Unknown package: ${pkg}\n`;
    }
  }
  return { out, code: 0 };
}
