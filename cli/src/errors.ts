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

export class CliError extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
    this.name = 'CliError';
  }
}

export const usageError = (message: string): CliError => new CliError(message, EXIT.usage);
