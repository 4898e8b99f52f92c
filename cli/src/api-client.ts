/**
 * The hub's REST API over Node's own fetch: Basic auth, the Result envelope, `/Async` polling, and the mapping of
 * every way a call can fail to an exit code and a message that says what to do next.
 */
import type { Credentials } from './config';
import { CliError, EXIT, exitCodeFor, type FailureCode } from './errors';

export type Params = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  params?: Params;
  body?: RequestInit['body'];
  headers?: Record<string, string>;
  /** Milliseconds the whole call may take (default 60 s). */
  timeoutMs?: number;
  /** What to do next when the hub answers a failure Result for this call. */
  hint?: FailureHint;
  signal?: AbortSignal;
}

/** The advice appended to a failure: fixed, or chosen by the failure's code. */
export type FailureHint = string | ((code: FailureCode | undefined) => string | undefined);

interface ResultEnvelope<T> {
  isSuccess: boolean;
  errorMessage?: string;
  errorCode?: FailureCode;
  errorParameter?: string;
  data?: T;
}

const DEFAULT_TIMEOUT_MS = 60_000;

export class ApiClient {
  private readonly authorization: string;

  constructor(readonly credentials: Credentials) {
    this.authorization = `Basic ${Buffer.from(`${credentials.user}:${credentials.token}`).toString('base64')}`;
  }

  url(path: string, params: Params = {}): string {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') query.set(key, String(value));
    const text = query.toString().replace(/\+/g, '%20');
    // A verb such as `?add` or `?update` travels in the path (a key without a value).
    return `${this.credentials.apiBase}${path}${text ? `${path.includes('?') ? '&' : '?'}${text}` : ''}`;
  }

  /** The HTTP response of a call that reached the hub and was accepted (2xx); anything else throws a CliError. */
  async raw(method: 'GET' | 'POST', path: string, options: RequestOptions = {}): Promise<Response> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
    const init: RequestInit & { duplex?: 'half' } = {
      method,
      headers: { authorization: this.authorization, accept: 'application/json', ...options.headers },
      body: options.body,
      signal: AbortSignal.any(signals),
    };
    if (options.body instanceof ReadableStream) init.duplex = 'half';
    let response: Response;
    try {
      response = await fetch(this.url(path, options.params), init);
    } catch (err) {
      throw this.transportError(err, `${method} ${path}`, timeoutMs);
    }
    if (response.ok) return response;
    throw await this.statusError(response, `${method} ${path}`);
  }

  /** A GET whose answer is a bare JSON value (lists), or a failure Result. */
  async get<T>(path: string, options: RequestOptions = {}): Promise<T> {
    const value = await this.json<T | ResultEnvelope<T>>('GET', path, options);
    if (isFailure(value)) throw this.failure(value, `GET ${path}`, options.hint);
    return value as T;
  }

  /** A call answered by a Result: its data on success, a CliError (exit 1, or 4 for a missing entitlement) otherwise. */
  async result<T = undefined>(method: 'GET' | 'POST', path: string, options: RequestOptions = {}): Promise<T> {
    const value = await this.json<ResultEnvelope<T>>(method, path, options);
    if (isFailure(value)) throw this.failure(value, `${method} ${path}`, options.hint);
    if (!value || typeof value !== 'object' || value.isSuccess !== true) {
      throw new CliError(`The hub's answer to ${method} ${path} is not a Result. Check that ${this.credentials.url} is a DeviceLab hub.`, EXIT.apiFailure);
    }
    return value.data as T;
  }

  /**
   * An async POST (spec 4.7): starts it, then polls `/Async` until it completes. Resolves with the completed data
   * (a Result's data, or the bare value an upload completes with); `onPoll` is told the elapsed time and the
   * percent the hub reports for the operation (installs do), when it does.
   */
  async asyncOperation<T = undefined>(path: string, options: RequestOptions & {
    deadlineMs: number; onPoll?: (elapsedMs: number, percent?: number) => void; pollIntervalMs?: number;
  }): Promise<T> {
    const started = Date.now();
    const { asyncResponseId } = await this.result<{ asyncResponseId: string }>('POST', path, options);
    return this.awaitAsync<T>(asyncResponseId, path, started, options);
  }

  async awaitAsync<T>(id: string, path: string, started: number, options: {
    deadlineMs: number; onPoll?: (elapsedMs: number, percent?: number) => void; pollIntervalMs?: number; hint?: FailureHint;
  }): Promise<T> {
    for (let interval = 250; ; interval = Math.min(interval * 2, options.pollIntervalMs ?? 2000)) {
      const status = await this.get<{ isComplete: boolean; data?: unknown; progress?: number }>('/Async', { params: { id } });
      if (status.isComplete) {
        const data = status.data as ResultEnvelope<T> | T | undefined;
        if (isFailure(data)) throw this.failure(data, `POST ${path}`, options.hint);
        if (data && typeof data === 'object' && 'isSuccess' in data) return (data as ResultEnvelope<T>).data as T;
        return data as T;
      }
      const elapsed = Date.now() - started;
      options.onPoll?.(elapsed, status.progress);
      if (elapsed > options.deadlineMs) {
        throw new CliError(`POST ${path} did not complete within ${Math.round(options.deadlineMs / 1000)} s (async id ${id}). `
          + 'The hub may still finish it: check the device, or allow longer with --timeout.', EXIT.timeout);
      }
      await new Promise((resolve) => setTimeout(resolve, interval));
    }
  }

  private async json<T>(method: 'GET' | 'POST', path: string, options: RequestOptions): Promise<T> {
    const response = await this.raw(method, path, options);
    const text = await response.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new CliError(`The hub's answer to ${method} ${path} is not JSON (${text.slice(0, 80)}...). Check that `
        + `${this.credentials.url} is a DeviceLab hub.`, EXIT.unreachable);
    }
  }

  /** A failure Result as a CliError: the parameter at fault named, its exit code and advice chosen by its `errorCode`. */
  failure(result: FailureFields, call: string, failureHint?: FailureHint): CliError {
    const message = result.errorMessage ?? 'failed without a message';
    const text = result.errorParameter ? `${message} (parameter '${result.errorParameter}')` : message;
    const code = result.errorCode;
    if (code === 'ENTITLEMENT_REQUIRED') {
      return new CliError(`${text} (${call}, as '${this.credentials.user}'). Ask your lab admin for a role with that `
        + 'entitlement, or use a login that has it.', exitCodeFor(code), code);
    }
    if (code === 'INVALID_PARAMETER' && result.errorParameter === 'filter') {
      // The filter is what the user typed: a usage error, with the hub's words.
      return new CliError(`--filter: ${message}`, EXIT.usage, code);
    }
    const hint = typeof failureHint === 'function' ? failureHint(code) : failureHint;
    return new CliError(`${text}${/[.!?]$/.test(text) ? '' : '.'} ${hint ?? `(the hub's answer to ${call}: check the values you gave; \`devicelab help\` shows each command's usage.)`}`,
      exitCodeFor(code), code);
  }

  private transportError(err: unknown, call: string, timeoutMs: number): CliError {
    const error = err as Error & { cause?: { code?: string; message?: string } };
    if (error.name === 'TimeoutError') {
      return new CliError(`${call} got no answer within ${Math.round(timeoutMs / 1000)} s. The hub at ${this.credentials.url} may be `
        + 'overloaded: try again, or allow longer with --timeout.', EXIT.timeout);
    }
    if (error.name === 'AbortError') return new CliError(`${call} was interrupted.`, EXIT.apiFailure);
    const reason = error.cause?.code ?? error.cause?.message ?? error.message;
    if (untrustedCertificate(error.cause?.code)) return untrustedHub(this.credentials.url, reason);
    return new CliError(`Cannot reach the hub at ${this.credentials.url} (${reason}). Check the address (from `
      + `${this.credentials.source.url}) and that the hub is running and reachable from here.`, EXIT.unreachable);
  }

  private async statusError(response: Response, call: string): Promise<CliError> {
    const text = await response.text().catch(() => '');
    let message: string | undefined;
    try {
      message = (JSON.parse(text) as ResultEnvelope<unknown>).errorMessage;
    } catch {
      // not JSON: a proxy's or another server's page
    }
    const retryAfter = response.headers.get('retry-after');
    const { user, source } = this.credentials;
    switch (response.status) {
      case 401:
        return new CliError(`The hub refused the login '${user}' with its token (HTTP 401). Check the login (from ${source.user}) `
          + `and the token (from ${source.token}); run \`devicelab login\` again if the token was rotated.`, EXIT.notAuthorised);
      case 429:
        return new CliError(`Too many failed logins from here (HTTP 429). Wait ${retryAfter ?? 'a few'} s, then try again with `
          + 'the right token.', EXIT.notAuthorised);
      case 503:
        return new CliError(`The hub is unavailable (HTTP 503${message ? `: ${message}` : ''}). Try again in ${retryAfter ?? 'a few'} s.`,
          EXIT.unreachable);
      case 404:
        return new CliError(`${this.credentials.apiBase} has no ${call.split(' ')[1]} (HTTP 404). Check that the address (from `
          + `${source.url}) is a DeviceLab hub and that it is recent enough for this command.`, EXIT.unreachable);
      default:
        return new CliError(`${call} failed with HTTP ${response.status}${message ? `: ${message}` : ''}. `
          + `${response.status >= 500 ? 'The hub\'s log has the details; tell your lab admin.' : 'Check the values you gave.'}`,
        EXIT.apiFailure);
    }
  }
}

type FailureFields = Pick<ResultEnvelope<unknown>, 'errorMessage' | 'errorCode' | 'errorParameter'>;

function isFailure(value: unknown): value is { isSuccess: false } & FailureFields {
  return Boolean(value && typeof value === 'object' && !Array.isArray(value)
    && (value as { isSuccess?: unknown }).isSuccess === false);
}

/** Node's codes for a TLS certificate chain that does not lead to a CA it trusts. */
export function untrustedCertificate(code: string | undefined): boolean {
  return /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_UNTRUSTED)$/
    .test(code ?? '');
}

export function untrustedHub(url: string, reason: string): CliError {
  return new CliError(`The hub at ${url} presents a TLS certificate this machine does not trust (${reason}). If the hub's `
    + 'certificate is self-signed or from your own CA, point NODE_EXTRA_CA_CERTS at that certificate (a PEM file), '
    + 'e.g. `NODE_EXTRA_CA_CERTS=/path/to/hub-ca.pem devicelab ...`.', EXIT.unreachable);
}
