/** Result envelopes of spec 2.3 in their wire form (wire rules 11, 14 and 32, docs/wire-rules.md). */
import type { FailureCode } from './failure-codes';

/**
 * A failure Result; `errorCode` (an extension, README "Failure codes") names the reason for programs, and
 * `errorParameter` the request parameter at fault (as the client spelled it), which the vendor's texts do not always name.
 */
export type FailureResult = { isSuccess: false; errorMessage: string; errorCode?: FailureCode; errorParameter?: string };
export type ResultModel = { isSuccess: true } | FailureResult;
export type Result<T> = { isSuccess: true; data: T } | FailureResult;

export const success = (): ResultModel => ({ isSuccess: true });
export const successWith = <T>(data: T): Result<T> => ({ isSuccess: true, data });
/** `errorCode` or `errorParameter` undefined is left out on the wire (the writer omits undefined, as JSON does). */
export const failure = (errorMessage: string, errorCode?: FailureCode, errorParameter?: string): FailureResult =>
  ({ isSuccess: false, errorMessage, errorCode, errorParameter });

export interface AsyncResponse { asyncResponseId: string }
export interface AsyncStatus<T> { isComplete: boolean; data?: T }

/**
 * A business failure a handler can throw; the HTTP layer writes it as a failure Result with HTTP 200, its `code`
 * as the Result's `errorCode`, its `parameter` (the request parameter at fault) as `errorParameter`.
 */
export class ApiFailure extends Error {
  constructor(message: string, readonly code?: FailureCode, readonly parameter?: string) {
    super(message);
    this.name = 'ApiFailure';
  }
}

/**
 * The answer to an error that is not an ApiFailure (a bug), the same on every path (HTTP 500, a stored /Async
 * result): the error itself goes to the hub's log, never to the client.
 */
export const UNEXPECTED_ERROR_MESSAGE = 'An unexpected error occurred; the hub logged it for its administrator.';
