/** The part of the `plist` package (3.1.1, no bundled types) that the plist codec uses: the XML parser. */
declare module 'plist' {
  export function parse(xml: string): unknown;
}
