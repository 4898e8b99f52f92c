/** Shell pattern matching of file names. */

/** One path component against a glob (`*`, `?`, `[set]`, `\\x`), without backtracking beyond the last `*`. */
export function globMatch(pattern: string, name: string): boolean {
  type Token = { star: true } | { star: false; test: (c: string) => boolean };
  const tokens: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') tokens.push({ star: true });
    else if (c === '?') tokens.push({ star: false, test: () => true });
    else if (c === '[' && pattern.indexOf(']', i + 2) > 0) {
      const end = pattern.indexOf(']', i + 2);
      const negate = pattern[i + 1] === '!' || pattern[i + 1] === '^';
      const set = pattern.slice(i + (negate ? 2 : 1), end);
      i = end;
      tokens.push({ star: false, test: (ch) => {
        let hit = false;
        for (let k = 0; k < set.length; k++) {
          if (set[k + 1] === '-' && k + 2 < set.length) {
            hit ||= ch >= set[k] && ch <= set[k + 2];
            k += 2;
          } else hit ||= ch === set[k];
        }
        return hit !== negate;
      } });
    } else {
      const literal = c === '\\' && i + 1 < pattern.length ? pattern[++i] : c;
      tokens.push({ star: false, test: (ch) => ch === literal });
    }
  }
  let t = 0;
  let n = 0;
  let starT = -1;
  let starN = 0;
  while (n < name.length) {
    const token = tokens[t];
    if (token && !token.star && token.test(name[n])) {
      t++;
      n++;
    } else if (token?.star) {
      starT = t++;
      starN = n;
    } else if (starT >= 0) {
      t = starT + 1;
      n = ++starN;
    } else return false;
  }
  while (tokens[t]?.star) t++;
  return t === tokens.length;
}
