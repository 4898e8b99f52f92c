/**
 * Exit codes of `devicelab` (README "Command reference") and the one error type that carries them. Every
 * message says what went wrong and what to do next.
 */
export const EXIT = {
  ok: 0,
  /** The API answered a failure Result. */
  apiFailure: 1,
  /** Bad arguments or options. */
  usage: 2,
  /** No matching device became free within --wait. */
  noDevice: 3,
  /** Missing or wrong credentials, or an entitlement the user lacks. */
  notAuthorised: 4,
  /** The hub could not be reached (or answered that it is unavailable). */
  unreachable: 5,
  /** A deadline passed (request, async operation, `run --timeout`). */
  timeout: 124,
} as const;

/**
 * A failure Result's `errorCode` (README "Failure codes"). Imported type-only: the CLI installs without the hub's
 * packages, and a code the catalog no longer has fails its type check.
 */
export type { FailureCode } from '../../shared/src/failure-codes';
import type { FailureCode } from '../../shared/src/failure-codes';

/** Exit codes chosen by the failure's code; any other failure Result exits with `apiFailure`. */
const EXIT_BY_CODE: Readonly<Partial<Record<FailureCode, number>>> = {
  ENTITLEMENT_REQUIRED: EXIT.notAuthorised,
  COMMAND_TIMEOUT: EXIT.timeout,
  COMMAND_EXPIRED: EXIT.timeout,
  DEVICE_TIMEOUT: EXIT.timeout,
  DEVICE_WAIT_TIMEOUT: EXIT.noDevice,
};

export const exitCodeFor = (code: FailureCode | undefined): number =>
  (code === undefined ? undefined : EXIT_BY_CODE[code]) ?? EXIT.apiFailure;

export class CliError extends Error {
  /** `failureCode`: the hub's `errorCode` when the error is its failure Result. */
  constructor(message: string, readonly exitCode: number, readonly failureCode?: FailureCode) {
    super(message);
    this.name = 'CliError';
  }
}

export const usageError = (message: string): CliError => new CliError(message, EXIT.usage);
