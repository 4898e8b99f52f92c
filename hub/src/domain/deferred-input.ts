/**
 * A request's input as a domain function receives it: the value, or a function that parses and checks it. Domain
 * functions check entitlements first and read their input only then, so a caller without the entitlement is
 * refused whatever else is wrong with the request (wire rule 19, docs/wire-rules.md).
 */
export type Deferred<T> = T | (() => T);

export function readDeferred<T>(input: Deferred<T>): T {
  return typeof input === 'function' ? (input as () => T)() : input;
}

/**
 * Changes a request makes, read in two steps: which properties it sets (an entitlement may depend on each, and is
 * checked before any value, wire rule 21), then the checked values. Either step may fail with ApiFailure.
 */
export interface ChangeRequest<Changes> {
  properties(): (keyof Changes)[];
  read(): Changes;
}
