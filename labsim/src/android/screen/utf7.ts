/**
 * Modified UTF-7 (RFC 3501 section 5.1.3, Java's "x-IMAP-mailbox-name"), the encoding Appium's Unicode IME decodes:
 * printable ASCII stands for itself, "&-" is "&", and "&<base64 with ',' for '/'>-" is UTF-16BE text.
 */

export function decodeModifiedUtf7(text: string): string {
  return text.replace(/&([A-Za-z0-9+,]*)-/g, (_, encoded: string) => {
    if (encoded === '') return '&';
    const bytes = Buffer.from(encoded.replace(/,/g, '/'), 'base64');
    const units: number[] = [];
    for (let i = 0; i + 1 < bytes.length; i += 2) units.push(bytes.readUInt16BE(i));
    return String.fromCharCode(...units);
  });
}

export function encodeModifiedUtf7(text: string): string {
  return text.replace(/&/g, '&-').replace(/[^\x20-\x7e]+/g, (run) => {
    const bytes = Buffer.alloc(run.length * 2);
    for (let i = 0; i < run.length; i++) bytes.writeUInt16BE(run.charCodeAt(i), i * 2);
    return `&${bytes.toString('base64').replace(/=+$/, '').replace(/\//g, ',')}-`;
  });
}
