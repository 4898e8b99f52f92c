/**
 * The WebDriver endpoint on a replica whose link does not hold the session's device: the request is forwarded over
 * HTTP to the owning replica's recorded API address (`hub_replicas.api_address`), streamed both ways with
 * backpressure, as /Device/Connect's WebSocket is forwarded (device-connect-forward.ts). The forwarded request
 * carries `DeviceLab-Forwarded-By` and is never forwarded again. The owner treats it as a client's own request: it
 * authenticates the client's credentials (the Authorization header, or the capabilities' deviceConnect pair) and
 * reads the session map itself; nothing this replica adds is trusted beyond what the owner checks again.
 *
 * Commands of a session: the whole request goes to the owner, which relays it through its link as for any client.
 *
 * A new session: its device is only known once the shared waiting line has handed one over (any replica's line
 * may hand any device), so the request cannot be sent to the owner before the claim. It is claimed here, and if the
 * device's link is elsewhere the client's request (its Authorization header and capabilities) goes to the owner
 * with `DeviceLab-Forwarded-Retain: <retain id>`; the owner authenticates the client and, instead of waiting in the
 * line, adopts that retain only when the authenticated user holds it by that very retain, the device is linked to
 * the owner, and no session uses it yet. Then it installs, creates and records the session as usual. A client that
 * forges the header gains nothing: it can only start a session on a device it already holds. When no session came
 * of it, the device is released here (if that retain still holds it and was made for the session, not adopted).
 */
import http from 'node:http';
import https from 'node:https';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { ApiFailure, parseGuid, type Logger } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { releaseDevice } from '../domain/device-actions';
import type { AutomationContext } from '../domain/automation/automation-sessions';
import { adoptableRetain, retainMadeForSession, type ClaimedDevice } from '../domain/automation/device-claim';
import type { LiveSession } from '../domain/automation/session-map';
import { thisReplica } from '../fleet/replica';
import { FORWARDED_BY_HEADER } from '../http/websocket-upgrade';
import { writeW3cError } from '../http/webdriver';
import { endToEndHeaders, HOP_BY_HOP_HEADERS } from '../http/webdriver-relay';

export const FORWARDED_RETAIN_HEADER = 'DeviceLab-Forwarded-Retain';

/** The other replica whose link holds a device (ReplicaDirectory.remoteHolder). */
export type RemoteHolder = (vendorUniqueIdentifier: string) => Promise<{ replicaId: string; apiAddress?: string } | undefined>;

export interface AppiumForwardDependencies {
  holder: RemoteHolder;
  logger: Logger;
}

/** Longest a forwarded command may take, answer included: the local relay's limit. */
const COMMAND_TIMEOUT_MS = 10 * 60_000;
/** Longest a forwarded session creation may take: an app install, then the driver's first start on the owner. */
const CREATE_TIMEOUT_MS = 20 * 60_000;

/** A device the line handed over here whose gateway is linked to another replica. */
export class DeviceClaimedElsewhere extends Error {
  constructor(readonly device: ClaimedDevice, readonly replicaId: string, readonly apiAddress: string) {
    super(`Device ${device.name} is linked through hub replica ${replicaId} (${apiAddress}).`);
    this.name = 'DeviceClaimedElsewhere';
  }
}

/** Connections to the other replicas, kept alive between forwarded commands and bounded per replica. */
const FORWARD_SOCKETS_PER_REPLICA = 64;
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: FORWARD_SOCKETS_PER_REPLICA, maxFreeSockets: 8 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: FORWARD_SOCKETS_PER_REPLICA, maxFreeSockets: 8 }),
};

/** What does not go on to the owner: the hop-by-hop fields, cookies (not needed), and our own headers, set only here. */
const NOT_FORWARDED = new Set([...HOP_BY_HOP_HEADERS, 'cookie', FORWARDED_BY_HEADER.toLowerCase(), FORWARDED_RETAIN_HEADER.toLowerCase()]);
const forwardedHeaders = (headers: http.IncomingHttpHeaders) => endToEndHeaders(headers, NOT_FORWARDED);

export function appiumForwarding(deps: AppiumForwardDependencies) {
  /**
   * Sends `req` (its body streamed, or `body` when it was read already) to the same path on `apiAddress` and
   * streams the answer into `res`. Resolves with the owner's status, or the reason no answer came (the client got
   * a W3C error then); the whole exchange ends at `timeoutMs`, and with the client.
   */
  const forward = (req: Request, res: Response, apiAddress: string, extra: Record<string, string>, timeoutMs: number, body?: Buffer,
  ): Promise<{ status?: number; error?: Error }> => new Promise((resolve) => {
    const target = new URL(req.originalUrl, apiAddress);
    const headers: http.OutgoingHttpHeaders = { ...forwardedHeaders(req.headers), ...extra, [FORWARDED_BY_HEADER]: thisReplica.id };
    if (body) {
      headers['content-type'] = 'application/json; charset=utf-8';
      headers['content-length'] = body.length;
    }
    const agent = target.protocol === 'https:' ? agents['https:'] : agents['http:'];
    const upstream = (target.protocol === 'https:' ? https : http).request(target, { method: req.method, headers, agent });
    let settled = false;
    const settle = (outcome: { status?: number; error?: Error }) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(outcome);
    };
    const deadline = setTimeout(() => upstream.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    upstream.on('response', (answer) => {
      res.status(answer.statusCode ?? 502);
      for (const [name, value] of Object.entries(forwardedHeaders(answer.headers))) if (value !== undefined) res.setHeader(name, value);
      pipeline(answer, res).then(() => settle({ status: answer.statusCode }), (error: Error) => {
        res.destroy();
        settle({ status: answer.statusCode, error });
      });
    });
    upstream.on('error', (error) => {
      if (res.headersSent) res.destroy();
      settle({ error });
    });
    res.on('close', () => { if (!res.writableFinished) upstream.destroy(); });
    if (body) upstream.end(body);
    else pipeline(req, upstream).catch((error: Error) => upstream.destroy(error));
  });

  const unreachable = (res: Response, replicaId: string, error: Error, what: string) => {
    deps.logger.warn({ err: error, replica: replicaId }, `WebDriver ${what} not forwarded`);
    writeW3cError(res, what === 'session' ? 'session not created' : 'unknown error',
      `The device is linked through hub replica ${replicaId}, which could not be reached: ${error.message}`, { status: 502 });
  };

  return {
    /**
     * A command of `session` whose device is linked to another replica: forwarded there, true when answered here
     * (forwarded or refused); false when this replica serves it (its link holds the device, no link does, or the
     * request was forwarded to it already).
     */
    async command(req: Request, res: Response, session: LiveSession): Promise<boolean> {
      if (req.headers[FORWARDED_BY_HEADER.toLowerCase()] !== undefined) return false;
      const owner = await deps.holder(session.vendor_unique_identifier);
      if (!owner) return false;
      if (!owner.apiAddress) {
        writeW3cError(res, 'unknown error', `The device is linked through hub replica ${owner.replicaId}, whose address is not known yet; try again.`, { status: 503 });
        return true;
      }
      const outcome = await forward(req, res, owner.apiAddress, {}, COMMAND_TIMEOUT_MS);
      if (outcome.error && !res.headersSent) unreachable(res, owner.replicaId, outcome.error, 'command');
      return true;
    },

    /**
     * The context a new session is created in: for a request forwarded with a retain, the claim adopts that retain
     * (see the module comment); otherwise the lab's claim, which throws DeviceClaimedElsewhere for a device whose
     * link is on another replica (unless the request was forwarded here already).
     */
    sessionContext(req: Request, ctx: AutomationContext): AutomationContext {
      const retainHeader = req.headers[FORWARDED_RETAIN_HEADER.toLowerCase()];
      if (retainHeader !== undefined) {
        return { ...ctx, claim: async (user) => adoptRetain(ctx, deps.holder, user, String(retainHeader)) };
      }
      const forwarded = req.headers[FORWARDED_BY_HEADER.toLowerCase()] !== undefined;
      return {
        ...ctx,
        claim: async (user, filter, waitMs, signal) => {
          const device = await ctx.claim(user, filter, waitMs, signal);
          const owner = forwarded ? undefined : await deps.holder(device.vendorUniqueIdentifier).catch(() => undefined);
          if (owner?.apiAddress) throw new DeviceClaimedElsewhere(device, owner.replicaId, owner.apiAddress);
          return device;
        },
      };
    },

    /** Creates the session on the owner of the device claimed here; the device goes back when no session came of it. */
    async createOnOwner(req: Request, res: Response, claimed: DeviceClaimedElsewhere, body: unknown, user: AuthenticatedUser,
      ctx: AutomationContext): Promise<void> {
      const outcome = await forward(req, res, claimed.apiAddress, { [FORWARDED_RETAIN_HEADER]: claimed.device.retainId },
        CREATE_TIMEOUT_MS, Buffer.from(JSON.stringify(body)));
      if (outcome.status !== 200) {
        const device = await ctx.db.selectFrom('devices').select('retain_id').where('id', '=', claimed.device.id).executeTakeFirst();
        // A retain the user held before the session (adopted) stays theirs.
        if (device?.retain_id === claimed.device.retainId && await retainMadeForSession(ctx.db, claimed.device.id)) {
          await releaseDevice(ctx.db, user, claimed.device.id, { now: ctx.clock, gateways: ctx.gateways }).catch((err: unknown) =>
            deps.logger.warn({ err, device: claimed.device.id }, 'could not release the device of a session not created'));
        }
      }
      if (outcome.error && !res.headersSent) unreachable(res, claimed.replicaId, outcome.error, 'session');
    },
  };
}

export type AppiumForwarding = ReturnType<typeof appiumForwarding>;

/** The owner's claim for a forwarded new session: the retain the forwarding replica's line made, checked here. */
async function adoptRetain(ctx: AutomationContext, holder: RemoteHolder, user: AuthenticatedUser, retainText: string): Promise<ClaimedDevice> {
  const retainId = parseGuid(retainText);
  if (!retainId) throw new ApiFailure('The forwarded session cannot be created here: no retain is named.', 'DEVICE_NOT_RETAINED');
  return adoptableRetain(ctx.db, user, retainId, async (device) =>
    (await holder(device.vendor_unique_identifier)) ? 'the device is linked through another hub replica now' : undefined);
}
