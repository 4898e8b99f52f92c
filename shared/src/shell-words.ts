/**
 * POSIX-ish shell words: splitting (single quotes, double quotes, backslash escapes; no expansion) and quoting.
 * The simulator splits the command lines adb sends; the gateway splits user text into words and quotes each, so
 * user text reaches a device's shell as arguments, never as shell syntax.
 */
export function splitShellWords(text: string): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      current += text.slice(i + 1, end < 0 ? text.length : end);
      inWord = true;
      i = end < 0 ? text.length : end + 1;
    } else if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1])) i++;
        current += text[i++];
      }
      i++;
      inWord = true;
    } else if (c === '\\' && i + 1 < text.length) {
      current += text[i + 1];
      inWord = true;
      i += 2;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
      i++;
    } else {
      current += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(current);
  return words;
}

/** Quotes a word for /bin/sh (left bare when it holds no character the shell treats specially). */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
