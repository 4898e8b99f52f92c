/**
 * The WebDriver endpoint, `/Appium` and `/wd/hub`: `POST /session` creates a session on a device of the lab (the
 * hub reads it), every other `/session/:id/...` request is relayed verbatim to that device's Appium server, and
 * `GET /queue` shows admins who waits for a device. Answers are WebDriver's (W3C errors), not the REST Result.
 * Credentials: Basic auth, or `deviceConnectUserName` + `deviceConnectApiKey` in the capabilities; commands of a
 * session need no credentials (WebDriver clients send them only with `POST /session`: the session id, which only
 * its creator learned, stands for them), and commands that carry credentials must be of the session's user or an
 * administrator (DeviceReleaseAny). A command reads its session kept in memory between writes (kept-sessions.ts)
 * after the request's sync, the same rule as every kept read; only creating and ending sessions note local writes
 * (this router comes before the app's `localWrites`: a relayed command writes nothing to the records).
 */
import { randomUUID } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import { ApiFailure, type Logger } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { parseBasicCredentials } from '../auth/basic-credentials';
import { hasEntitlement } from '../auth/entitlements';
import { createAutomationSession, endAutomationSession, type AutomationContext } from '../domain/automation/automation-sessions';
import { readNewSessionRequest } from '../domain/automation/capabilities';
import type { CommandTimes } from '../domain/automation/command-times';
import { endedSessionReason, findLiveSession, offlineSince, OFFLINE_GRACE_MS, whySessionEnded, type LiveSession } from '../domain/automation/session-map';
import type { KeptReads } from '../events/kept-reads';
import type { credentialChecker } from '../http/basic-auth';
import { readBoundedJson, webDriverErrorHandler, writeApiFailureAsW3c, writeW3cError } from '../http/webdriver';
import { onClientGone } from '../http/client-gone';
import { localWrites } from '../http/local-writes';
import { relayWebDriver } from '../http/webdriver-relay';
import { DeviceClaimedElsewhere, type AppiumForwarding } from './appium-forward';

export interface AppiumRouteDependencies {
  automation: AutomationContext;
  checkCredentials: ReturnType<typeof credentialChecker>;
  /** The hub's kept reads: each command's sync, and the local writes of creating and ending sessions. */
  kept: KeptReads;
  times: CommandTimes;
  logger: Logger;
  /** The waiting line's entries for `GET /queue`. */
  listWaiting: () => Promise<unknown[]>;
  /** A command is use of the device: its lease's idle release hears of it (written at most every few seconds). */
  noteDeviceUse: (deviceId: string) => void;
  /** Hub replicas: sessions whose device is linked to another replica are served there (appium-forward.ts). */
  forward?: AppiumForwarding;
}

/** Longest a relayed command may take (an implicit wait, a long gesture, a large source). */
const COMMAND_TIMEOUT_MS = 10 * 60_000;
/** How often a command waiting for its device to come back online looks again. */
const OFFLINE_POLL_MS = 250;
const AUTH_HEADERS = { 'WWW-Authenticate': 'Basic realm="DeviceLab"' };

export function appiumRouter(deps: AppiumRouteDependencies): Router {
  const router = express.Router({ caseSensitive: false });
  const { automation } = deps;

  /** The caller named by Basic auth: a user, none (no header), or answered already (refused, throttled). */
  const basicCaller = async (req: Request, res: Response, heard?: Promise<boolean>): Promise<AuthenticatedUser | null | undefined> => {
    const header = req.headers.authorization;
    if (header === undefined) return null;
    return credentialsCaller(req, res, parseBasicCredentials(header), heard);
  };
  const credentialsCaller = async (
    req: Request, res: Response, credentials: ReturnType<typeof parseBasicCredentials>, heard?: Promise<boolean>,
  ): Promise<AuthenticatedUser | undefined> => {
    const outcome = await deps.checkCredentials(req.ip ?? req.socket.remoteAddress ?? 'unknown', credentials, false, heard);
    if (outcome.kind === 'accepted') return outcome.user;
    if (outcome.kind === 'throttled') {
      const seconds = Math.max(1, Math.ceil(outcome.waitMs / 1000));
      writeW3cError(res, 'unknown error', `Too many failed logins; try again in ${seconds} second(s).`, { status: 429, headers: { 'Retry-After': String(seconds) } });
    } else {
      writeW3cError(res, 'unknown error', 'Authentication failed: wrong login or API token.', { status: 401, headers: AUTH_HEADERS });
    }
    return undefined;
  };

  router.post('/session', localWrites(deps.kept), async (req, res, next) => {
    try {
      const basic = await basicCaller(req, res);
      if (basic === undefined) return;
      let request;
      let body: unknown;
      try {
        request = readNewSessionRequest(body = await readBoundedJson(req));
      } catch (err) {
        if (err instanceof ApiFailure) {
          res.set('Connection', 'close'); // a refused body is not read to its end
          return writeApiFailureAsW3c(res, err);
        }
        throw err;
      }
      let user: AuthenticatedUser | undefined = basic ?? undefined;
      if (!user) {
        if (!request.credentials) {
          return writeW3cError(res, 'session not created', 'Authentication required: give Basic credentials (user:apiToken@ in the URL) '
            + 'or the capabilities deviceConnectUserName and deviceConnectApiKey.', { status: 401, headers: AUTH_HEADERS });
        }
        const { login, apiKey } = request.credentials;
        user = await credentialsCaller(req, res, { kind: 'credentials', login, token: apiKey });
        if (!user) return;
      }
      const gone = new AbortController();
      onClientGone(res, () => gone.abort());
      const requestId = randomUUID();
      let created;
      try {
        created = await createAutomationSession(deps.forward?.sessionContext(req, automation) ?? automation, user, request, { signal: gone.signal, requestId });
      } catch (err) {
        if (!(err instanceof DeviceClaimedElsewhere) || !deps.forward) throw err;
        return await deps.forward.createOnOwner(req, res, err, body, user, automation);
      }
      if (created.sessionId && gone.signal.aborted) {
        const session = await findLiveSession(automation.db, created.sessionId);
        if (session) await endAutomationSession(automation, session, 'its client went away while it was created', { deleteOnGateway: true });
        return;
      }
      res.status(created.answer.status).set('x-request-id', requestId).type('application/json; charset=utf-8').send(created.answer.text);
    } catch (err) {
      if (res.destroyed || res.writableEnded) return; // the client left the line (or never stayed for the answer)
      if (err instanceof ApiFailure) return writeApiFailureAsW3c(res, err);
      next(err);
    }
  });

  router.get('/queue', async (req, res, next) => {
    try {
      const user = await basicCaller(req, res);
      if (user === undefined) return;
      if (user === null) return writeW3cError(res, 'unknown error', 'Authentication required.', { status: 401, headers: AUTH_HEADERS });
      if (!hasEntitlement(user, 'DeviceReleaseAny')) {
        return writeW3cError(res, 'unknown error', 'User does not have required entitlement: DeviceReleaseAny', { status: 403 });
      }
      res.json({ value: await deps.listWaiting() });
    } catch (err) {
      next(err);
    }
  });

  /**
   * A device offline for less than the grace (its gateway reconnecting, a hub restart): the command waits for it to
   * come back, up to the grace, then goes on with the session as it then is. Undefined when the client left.
   */
  const untilDeviceBack = async (session: LiveSession, res: Response): Promise<LiveSession | undefined> => {
    let current = session;
    for (;;) {
      const since = offlineSince(current);
      if (since === undefined || automation.clock().getTime() - since >= OFFLINE_GRACE_MS || current.state !== 'open') return current;
      await new Promise((resolve) => setTimeout(resolve, OFFLINE_POLL_MS));
      if (res.destroyed) return undefined;
      const again = await findLiveSession(automation.db, current.session_id);
      if (!again) return current;
      current = again;
    }
  };

  router.all(['/session/:sessionId', '/session/:sessionId/*rest'], async (req, res, next) => {
    try {
      const sessionId = String(req.params.sessionId);
      // Both reads at once, after one sync: a session (and credentials) kept since the last write need no round trip.
      const heard = deps.kept.sync();
      // Commands carry no credentials as clients send them: then the session's read is the only wait.
      const [caller, found] = req.headers.authorization === undefined
        ? [null, await automation.sessions.find(sessionId, await heard)]
        : await Promise.all([basicCaller(req, res, heard), heard.then((h) => automation.sessions.find(sessionId, h))]);
      let session = found;
      if (caller === undefined) return;
      if (!session) {
        const ended = await endedSessionReason(automation.db, sessionId);
        return writeW3cError(res, 'invalid session id', ended
          ? `The session ${sessionId.slice(0, 64)} has ended: ${ended}.`
          : `No session ${sessionId.slice(0, 64)} is known to the lab.`);
      }
      if (await deps.forward?.command(req, res, session)) return; // its device is linked to another replica
      if (caller && caller.id !== session.user_id && !hasEntitlement(caller, 'DeviceReleaseAny')) {
        return writeW3cError(res, 'invalid session id', `The session ${sessionId.slice(0, 64)} is not yours.`, { status: 403 });
      }
      if (offlineSince(session) !== undefined) {
        const standing = await untilDeviceBack(session, res);
        if (!standing) return; // the client went away meanwhile
        session = standing;
      }
      const ended = whySessionEnded(session, automation.clock().getTime());
      if (ended) {
        await endAutomationSession(automation, session, ended, { deleteOnGateway: session.device_availability === 'Online' });
        deps.kept.noteLocalWrite();
        return writeW3cError(res, 'invalid session id', `The session ${sessionId} has ended: ${ended}.`);
      }
      if (session.state === 'closing') return writeW3cError(res, 'invalid session id', `The session ${sessionId} is being deleted.`);
      const path = req.originalUrl.slice(req.baseUrl.length);
      if (req.method === 'DELETE' && req.params.rest === undefined) {
        const answer = await endAutomationSession(automation, session, 'its client deleted it', { deleteOnGateway: true });
        deps.kept.noteLocalWrite();
        if (!answer) return res.json({ value: null });
        return res.status(answer.status).type('application/json; charset=utf-8').send(answer.text);
      }
      deps.times.touch(session.id, automation.clock());
      deps.noteDeviceUse(session.device_id);
      const outcome = await relayWebDriver(req, res, automation.automation.automationAgent(session.vendor_unique_identifier), path, COMMAND_TIMEOUT_MS);
      if (outcome.error && !res.headersSent) {
        deps.logger.warn({ err: outcome.error, sessionId }, 'automation command not relayed');
        writeW3cError(res, 'unknown error', `The device's Appium server could not be reached: ${outcome.error.message}`, { status: 502 });
      }
    } catch (err) {
      if (err instanceof ApiFailure) return writeApiFailureAsW3c(res, err);
      next(err);
    }
  });

  router.all('/*rest', (req, res) => {
    writeW3cError(res, 'unknown command', `The lab's WebDriver endpoint has no ${req.method} ${req.path.slice(0, 100)}: `
      + 'create a session with POST /session, then send its commands to /session/<id>/...');
  });
  router.use(webDriverErrorHandler(deps.logger));
  return router;
}
