/**
 * How domain code asks for a read that may be kept between writes (the hub's kept reads, events/kept-reads.ts,
 * decide whether it is): `keep(key, load)` gives the kept value of `key` or runs `load`. Domain code knows only
 * this shape; a caller without kept reads passes `readNow`.
 */
export type KeepRead = <T>(key: string, load: () => Promise<T>, tables?: readonly string[]) => Promise<T>;

export const readNow: KeepRead = (_key, load) => load();
