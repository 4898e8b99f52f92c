/** A line to copy (a command, a token): selectable text and a Copy button. */
import { useState } from 'preact/hooks';

export function CopyLine({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      // No clipboard (plain HTTP on another host): the text stays selectable.
      setCopied(false);
    }
  };
  return (
    <div class="copy-line">
      <code aria-label={label}>{text}</code>
      <button type="button" onClick={copy} aria-label={`Copy ${label}`}>{copied ? 'Copied' : 'Copy'}</button>
    </div>
  );
}
