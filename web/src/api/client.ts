/**
 * The hub's REST API from the browser: same origin, the session cookie, and the CSRF header on every request (the
 * hub refuses a state-changing cookie request without it, and answers a 401 without a Basic challenge).
 */
import type { AsyncStatus, FailureCode, Result } from './types';

const CSRF = { 'X-DeviceLab-CSRF': '1' };

/** A failure the hub answered: its message, the HTTP status, and the failure Result's `errorCode` when it has one. */
export class ApiError extends Error {
  constructor(message: string, readonly status: number, readonly code?: FailureCode) {
    super(message);
  }
}

/** Listeners told when the hub says the session is gone (401): the app shows the sign-in form. */
const signedOutListeners = new Set<() => void>();
export const onSignedOut = (listener: () => void) => {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
};

export function query(params: Record<string, string | number | boolean | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

async function request(method: string, path: string, body?: BodyInit, contentType = 'application/x-www-form-urlencoded'): Promise<Response> {
  const headers: Record<string, string> = { ...CSRF, Accept: 'application/json' };
  if (typeof body === 'string') headers['Content-Type'] = contentType;
  const res = await fetch(`/apiv1${path}`, { method, headers, body, credentials: 'same-origin' });
  if (res.status === 401) {
    for (const listener of signedOutListeners) listener();
    throw new ApiError('Signed out', 401);
  }
  return res;
}

/** GET a JSON body (a list or a model, as the route answers). */
export async function getJson<T>(path: string): Promise<T> {
  const res = await request('GET', path);
  const body = await res.json();
  if (body && typeof body === 'object' && body.isSuccess === false) throw new ApiError(body.errorMessage ?? 'Request failed', res.status, body.errorCode);
  return body as T;
}

/**
 * GET a JSON body before the session is known (page load): undefined when signed out or failing, and no sign-out
 * is signalled (the session check says that).
 */
export async function getJsonIfSignedIn<T>(path: string): Promise<T | undefined> {
  try {
    const res = await fetch(`/apiv1${path}`, { headers: { ...CSRF, Accept: 'application/json' }, credentials: 'same-origin' });
    const body = res.ok ? await res.json() as T & { isSuccess?: boolean } : undefined;
    return body && body.isSuccess !== false ? body : undefined;
  } catch {
    return undefined;
  }
}

export async function getText(path: string): Promise<string> {
  const res = await request('GET', path);
  return res.text();
}

/** POST (or DELETE) and read a Result; a failure Result becomes an ApiError with the hub's message. */
export async function call<T = undefined>(method: 'POST' | 'DELETE', path: string, form?: Record<string, string>, json?: unknown): Promise<T | undefined> {
  const res = json !== undefined ? await request(method, path, JSON.stringify(json), 'application/json')
    : await request(method, path, form ? new URLSearchParams(form).toString() : undefined);
  const body = (await res.json().catch(() => ({ isSuccess: false, errorMessage: `HTTP ${res.status}` }))) as Result<T>;
  if (!body.isSuccess) throw new ApiError(body.errorMessage ?? `HTTP ${res.status}`, res.status, body.errorCode);
  return body.data;
}

/**
 * Polls /Async until the job is complete; its data is a Result (install, launch) or the uploaded Application.
 * `onProgress` hears the percent a running job reports (installs).
 */
export async function awaitJob<T>(asyncResponseId: string, onProgress?: (percent: number) => void, intervalMs = 500): Promise<T> {
  let failingSince: number | undefined;
  // Every turn ends with a pause, a failed poll's too (`continue` runs it).
  for (;; await new Promise((resolve) => setTimeout(resolve, intervalMs))) {
    let status: AsyncStatus<T>;
    try {
      // An AsyncStatus, or a failure Result for an unknown id (getJson throws it).
      status = await getJson<AsyncStatus<T>>(`/Async${query({ id: asyncResponseId })}`);
      failingSince = undefined;
    } catch (err) {
      // The job's own failure (unknown or expired id, signed out) is final. A hub that cannot answer right now (its
      // database restarting, a proxy in front of it, the network) is not: the job goes on, so polling does too.
      const transient = !(err instanceof ApiError) || TRANSIENT_POLL_STATUSES.has(err.status);
      failingSince ??= Date.now();
      if (!transient || Date.now() - failingSince > TRANSIENT_POLL_WINDOW_MS) throw err;
      continue;
    }
    if (status.isComplete) return status.data as T;
    if (status.progress !== undefined) onProgress?.(status.progress);
  }
}

/** Answers to a poll that say "not now" rather than "no": the hub's 503 while PostgreSQL is away, a proxy's 502/504. */
const TRANSIENT_POLL_STATUSES = new Set([429, 502, 503, 504]);
/** How long polling rides out such answers before it reports the last one. */
const TRANSIENT_POLL_WINDOW_MS = 30_000;

/**
 * Uploads a file with XMLHttpRequest, the only browser API that reports upload progress; `onProgress` gets 0..1.
 * Resolves with the async job id of the hub's package inspection.
 */
export function uploadWithProgress(file: File, onProgress: (fraction: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/apiv1/Application?verb=add');
    xhr.setRequestHeader('X-DeviceLab-CSRF', '1');
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onerror = () => reject(new ApiError('Upload failed: the connection was lost', 0));
    xhr.onload = () => {
      try {
        const body = JSON.parse(xhr.responseText) as Result<{ asyncResponseId: string }>;
        if (!body.isSuccess || !body.data) reject(new ApiError(body.errorMessage ?? `HTTP ${xhr.status}`, xhr.status));
        else resolve(body.data.asyncResponseId);
      } catch {
        reject(new ApiError(`HTTP ${xhr.status}`, xhr.status));
      }
    };
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}
