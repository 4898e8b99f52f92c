/** The part of the `plist` package (3.1.1, no bundled types) that the simulator uses. */
declare module 'plist' {
  export type PlistValue = string | number | boolean | Date | Buffer | PlistValue[] | { [key: string]: PlistValue };
  export function parse(xml: string): PlistValue;
  export function build(value: PlistValue): string;
}
