/**
 * Remote adb for the retainer: while an Android device is retained, a TCP port of this gateway speaks
 * the adbd protocol for it, so `adb connect <gateway>:<port>` on the user's machine gives a real adb transport.
 *
 * Each connection is our adb bridge (`adb-bridge.ts`: the adbd protocol, every stream carried through this host's
 * adb server, bounded buffering). This module owns the listeners, decides who gets in and reports it: a client
 * gets in when it signs the AUTH token with one of the keys the hub sent in the device's Retention (the current
 * retainer's, read at that moment); a key it offers otherwise is refused and the refusal reported with its
 * fingerprint. A release or a new retainer drops every connection at once.
 *
 * A device keeps its endpoint's port from its first retain while it stays on this host, so the
 * hub names it in the next retain's ticket at once, without waiting for this gateway to hear of that retain. A
 * client that connects is therefore held, unread, until the hub has answered an AccessSync (`sync`): the answer
 * comes behind every Retention the hub sent before it, so the client is checked against every retain and release
 * that had returned when it came: the retainer of a retain that just returned gets in, the previous one does not.
 */
import { constants, createPublicKey, publicDecrypt, type KeyObject } from 'node:crypto';
import net from 'node:net';
import type { Client } from '@devicefarmer/adbkit';
import type { AccessEndpoint, DeviceAccessEvent, Retention } from '@devicelab/proto';
import { OncePerInterval, parseAdbPublicKey, readAdbPublicKeyStruct, type Logger } from '@devicelab/shared';
import { AdbBridge } from './adb-bridge';
import type { AccessSocket } from './tunnel-socket';

export interface PortRange {
  first: number;
  last: number;
}

/**
 * Largest adb packet payload offered to clients (adbd's MAX_PAYLOAD since Android 7.0; older clients ask for
 * less). A push pays one round trip per packet per stream, so larger packets carry more per trip.
 */
const MAX_PAYLOAD_BYTES = 1024 * 1024;
/** Before a client has authenticated it may send this much (CNXN and AUTH packets are about 1 KiB), for this long. */
const UNAUTHENTICATED_BYTES = 64 * 1024;
const AUTH_DEADLINE_MS = 10_000;
/** How long a new connection waits for the hub's AccessSync answer before it is checked against what is known here. */
const SYNC_WAIT_MS = 3_000;
/**
 * A refused key is reported at most once in this long per device, key and client host: an adb server keeps
 * reconnecting to an endpoint it was connected to (every second or so), and each attempt is refused again.
 */
const REFUSAL_REPORT_INTERVAL_MS = 60_000;

export const DEFAULT_ADB_ACCESS_PORTS: PortRange = { first: 7400, last: 7599 };

interface AdbAccessOptions {
  adb: Client;
  ports: PortRange;
  /** Address the endpoints listen on (default every interface). */
  host?: string;
  logger: Logger;
  /** Whether this gateway drives the device over adb (other platforms get no adb endpoint). */
  ownsAndroidDevice(vendorUniqueIdentifier: string): boolean;
  /** Connection opened or refused: becomes a Note event on the device at the hub. */
  report(event: DeviceAccessEvent): void;
  /** Bytes from a client of the device's endpoint: its holder uses it (the caller coalesces). */
  used?(vendorUniqueIdentifier: string): void;
  /** A client installed or removed packages through the endpoint: read them again, so the hub's record follows. */
  packagesChanged(vendorUniqueIdentifier: string): void;
  /** An endpoint closed on its own (its device left while nobody retained it): the hub forgets its port. */
  endpointClosed?(endpoint: AccessEndpoint): void;
  /**
   * Resolves once every Retention the hub had sent when it heard this call has been applied here (HubLink's
   * AccessSync); at once when there is no hub to ask.
   */
  sync?(): Promise<void>;
}

/** A stream opened with one of these may change the installed packages (legacy pm, cmd, abb). */
const PACKAGE_SERVICES = /\b(pm|install|uninstall|install-multiple|package)\b/;
/** Packages are read again once the connection has been quiet this long after such a stream. */
const PACKAGE_SETTLE_MS = 500;

/** The retainer's keys, to check a client's AUTH signature against. */
interface Grant {
  retainId: string;
  userLogin: string;
  verifiers: { fingerprint: string; key: KeyObject }[];
}

/** adb signs the 20-byte AUTH token as a SHA-1 digest (PKCS#1 v1.5): DigestInfo prefix + token. */
const SHA1_DIGEST_INFO = Buffer.from('3021300906052b0e03021a05000414', 'hex');

interface Endpoint {
  vendorUniqueIdentifier: string;
  server: net.Server;
  port: number;
  /** Who may open it; none between a release and the next retain. */
  grant: Grant | undefined;
  connections: Set<AccessSocket>;
  /** The device's CNXN banner, read once while the device is here. */
  banner?: Promise<string>;
  /** The device left this host (port Off, unplugged, not Ready): connections are refused until it is back. */
  absent: boolean;
}

export class AdbAccessEndpoints {
  private readonly endpoints = new Map<string, Endpoint>();
  /** The port each device's endpoint had: a device that comes back gets it again when it is free (the hub may name it). */
  private readonly lastPorts = new Map<string, number>();
  /** Refusals told, by `device key host` (see REFUSAL_REPORT_INTERVAL_MS). */
  private readonly refusalsReported = new OncePerInterval(REFUSAL_REPORT_INTERVAL_MS);
  private stopped = false;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: AdbAccessOptions) {}

  /**
   * A retain (open or re-key the endpoint) or a release (close it); answers where the endpoint listens.
   * One at a time, in arrival order: a release that follows a retain never overtakes its binding.
   */
  apply(retention: Retention): Promise<AccessEndpoint> {
    const next = this.queue.then(() => this.applyNow(retention));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async applyNow(retention: Retention): Promise<AccessEndpoint> {
    const vuid = retention.vendorUniqueIdentifier;
    const answer = (port: number): AccessEndpoint => ({ vendorUniqueIdentifier: vuid, retainId: retention.retainId, port });
    const current = this.endpoints.get(vuid);
    if (this.stopped) {
      if (current) this.close(current, 'gateway stopping');
      return answer(0);
    }
    if (!retention.retainId) {
      if (!current) return answer(0);
      this.revoke(current, 'released');
      if (!current.absent) return answer(current.port); // kept for the device's next retain
      this.close(current, 'released while the device is away');
      return answer(0);
    }
    const grant = grantOf(retention, this.options.logger);
    if (current) {
      // Another retain's connections drop; one that came while nobody retained it is checked against this one's keys.
      if (current.grant && current.grant.retainId !== grant.retainId) this.revoke(current, 'retained by someone else');
      current.grant = grant; // same retain: the retainer's keys changed, new connections see the new set
      return answer(current.port);
    }
    if (!this.options.ownsAndroidDevice(vuid)) return answer(0);
    const endpoint = await this.listen(vuid, grant);
    return answer(endpoint?.port ?? 0);
  }

  /** Welcome: the hub's whole current set; endpoints of devices not in it close. */
  async replaceAll(retentions: readonly Retention[]): Promise<AccessEndpoint[]> {
    const retained = new Set(retentions.filter((r) => r.retainId).map((r) => r.vendorUniqueIdentifier));
    for (const endpoint of [...this.endpoints.values()]) {
      if (retained.has(endpoint.vendorUniqueIdentifier)) continue;
      this.revoke(endpoint, 'not retained at the hub');
      if (endpoint.absent) this.close(endpoint, 'not retained at the hub');
    }
    const answers: AccessEndpoint[] = [];
    for (const retention of retentions) answers.push(await this.apply(retention));
    return answers;
  }

  /**
   * The device left this host (unplugged, USB port off, not Ready): its connections drop, and the reconnects adb
   * clients attempt are refused; the endpoint stays for its return.
   */
  deviceGone(vendorUniqueIdentifier: string): void {
    const endpoint = this.endpoints.get(vendorUniqueIdentifier);
    if (!endpoint) return;
    endpoint.absent = true;
    endpoint.banner = undefined;
    for (const socket of endpoint.connections) socket.destroy();
    if (endpoint.grant) return;
    // Nobody retains it: its port goes back to the range (the hub is told, so no ticket names it any more).
    this.close(endpoint, 'device left while not retained');
    this.options.endpointClosed?.({ vendorUniqueIdentifier, retainId: '', port: 0 });
  }

  /** The device is Ready on this host again: its endpoint takes connections. */
  deviceReady(vendorUniqueIdentifier: string): void {
    const endpoint = this.endpoints.get(vendorUniqueIdentifier);
    if (endpoint) endpoint.absent = false;
  }

  /** The endpoint's port while the device is retained and served here. */
  portOf(vendorUniqueIdentifier: string): number | undefined {
    const endpoint = this.endpoints.get(vendorUniqueIdentifier);
    return endpoint?.grant ? endpoint.port : undefined;
  }

  /**
   * What serves a hub tunnel (tunnel-socket.ts) as a connection to the device's endpoint, in process: admitted exactly
   * as a TCP client (AccessSync wait, AUTH by the retainer's keys, dropped at release). Undefined when the device is
   * not retained and served here, so the caller can refuse before it acknowledges the tunnel; call it at once.
   */
  tunnelServer(vendorUniqueIdentifier: string): ((socket: AccessSocket) => void) | undefined {
    const endpoint = this.endpoints.get(vendorUniqueIdentifier);
    if (!endpoint?.grant) return undefined;
    return (socket) => this.accept(endpoint, socket);
  }

  /** Resolves once the Retentions applied so far (apply, replaceAll) are in effect. */
  applied(): Promise<void> {
    return this.queue.then(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const endpoint of [...this.endpoints.values()]) this.close(endpoint, 'gateway stopping');
  }

  private async listen(vuid: string, grant: Grant): Promise<Endpoint | undefined> {
    const { first, last } = this.options.ports;
    const used = new Set([...this.endpoints.values()].map((e) => e.port));
    // The device's previous port first; then ports no other device had, then the rest.
    const others = new Set([...this.lastPorts].filter(([id]) => id !== vuid).map(([, port]) => port));
    const range = Array.from({ length: last - first + 1 }, (_, i) => first + i);
    const previous = this.lastPorts.get(vuid);
    const candidates = [...(previous === undefined ? [] : [previous]),
      ...range.filter((port) => port !== previous && !others.has(port)), ...range.filter((port) => others.has(port))];
    for (const port of candidates) {
      if (used.has(port)) continue;
      const server = net.createServer({ allowHalfOpen: true });
      const bound = await new Promise<boolean>((resolve) => {
        server.once('error', () => resolve(false));
        server.listen(port, this.options.host ?? '0.0.0.0', () => resolve(true));
      });
      if (!bound) continue;
      if (this.stopped || this.endpoints.has(vuid)) {
        server.close(); // stopped, or another retention got there first while this one was binding
        return this.endpoints.get(vuid);
      }
      const endpoint: Endpoint = { vendorUniqueIdentifier: vuid, server, port, grant, connections: new Set(), absent: false };
      this.lastPorts.set(vuid, port);
      server.on('connection', (socket) => this.accept(endpoint, socket));
      server.on('error', (err) => this.options.logger.warn({ err, device: vuid }, 'adb access endpoint failed'));
      this.endpoints.set(vuid, endpoint);
      this.options.logger.info({ device: vuid, port }, 'adb access endpoint open');
      return endpoint;
    }
    this.options.logger.error({ device: vuid, ...this.options.ports }, 'no free port for an adb access endpoint');
    return undefined;
  }

  private accept(endpoint: Endpoint, socket: AccessSocket): void {
    if (endpoint.absent) return void socket.destroy();
    socket.on('error', () => socket.destroy());
    if (!this.options.sync) return this.bridge(endpoint, socket);
    // The retain this client made may still be on its way from the hub: its bytes wait unread until the hub's
    // AccessSync answer is in (or SYNC_WAIT_MS passed: then what is known here decides). A release or retain
    // applied meanwhile does not drop it: it is checked against what they leave.
    socket.pause();
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      clearTimeout(timer);
      if (socket.destroyed) return;
      this.bridge(endpoint, socket);
      socket.resume();
    };
    const timer = setTimeout(start, SYNC_WAIT_MS);
    this.options.sync().then(start, start);
    socket.once('close', () => clearTimeout(timer));
  }

  private bridge(endpoint: Endpoint, socket: AccessSocket): void {
    // Closed or away meanwhile: nothing to open.
    if (endpoint.absent || this.endpoints.get(endpoint.vendorUniqueIdentifier) !== endpoint) return void socket.destroy();
    endpoint.connections.add(socket);
    socket.on('close', () => endpoint.connections.delete(socket));
    const from = () => this.describePeer(socket);
    // After a stream that may change packages, they are read again once the connection has been quiet a while.
    let packagesTimer: NodeJS.Timeout | undefined;
    let packagesDirty = false;
    const settle = () => {
      if (!packagesDirty) return;
      clearTimeout(packagesTimer);
      packagesTimer = setTimeout(() => {
        packagesDirty = false;
        this.options.packagesChanged(endpoint.vendorUniqueIdentifier);
      }, PACKAGE_SETTLE_MS);
    };
    socket.on('data', settle);
    // Use counts once the client has opened the device with one of the retainer's keys, not before.
    let opened = false;
    socket.on('data', () => { if (opened) this.options.used?.(endpoint.vendorUniqueIdentifier); });
    const bridge = new AdbBridge(socket, {
      adb: this.options.adb,
      serial: endpoint.vendorUniqueIdentifier,
      maxPayload: MAX_PAYLOAD_BYTES,
      banner: () => this.bannerOf(endpoint),
      // A client signs the token with each of its keys in turn; one of the retainer's keys opens the connection.
      authenticate: (token, signature) => {
        if (!endpoint.connections.has(socket)) return false; // released meanwhile
        const signer = endpoint.grant?.verifiers.find(({ key }) => signatureMatches(key, token, signature));
        if (signer) this.reportOpened(endpoint, from(), signer.fingerprint, '');
        opened ||= signer !== undefined;
        return signer !== undefined;
      },
      // Out of keys, the client offers its public key (a real device would ask its user): refused and reported.
      offerKey: (text, token, signatures) => {
        this.refuseOffered(endpoint, from(), text, token, signatures);
        return false;
      },
      serviceOpened: (service) => {
        if (!PACKAGE_SERVICES.test(service)) return;
        packagesDirty = true;
        settle();
      },
      failed: (err) => this.options.logger.debug({ err, device: endpoint.vendorUniqueIdentifier }, 'adb access connection error'),
    });
    this.guardUnauthenticated(socket, () => bridge.isAuthenticated);
  }

  /**
   * `device::` with the properties a real adbd names itself by (what `adb devices -l` shows) and the device's adb
   * features, so the client uses what the device speaks (shell_v2 exit codes, streamed installs, stat_v2 ...):
   * they name services, which pass through the bridge as they are. Not `delayed_ack`, which changes how packets
   * are acknowledged on this transport and which the bridge does not speak.
   */
  private bannerOf(endpoint: Endpoint): Promise<string> {
    if (endpoint.banner) return endpoint.banner;
    const device = this.options.adb.getDevice(endpoint.vendorUniqueIdentifier);
    const banner = Promise.all([Promise.resolve(device.getProperties()), this.adbFeaturesOf(endpoint.vendorUniqueIdentifier)])
      .then(([properties, features]: [Record<string, string>, string[]]) => {
        const names = ['ro.product.name', 'ro.product.model', 'ro.product.device'];
        const passed = features.filter((feature) => feature !== 'delayed_ack');
        return `device::${names.map((name) => `${name}=${properties[name] ?? ''};`).join('')}features=${passed.join(',')}`;
      });
    endpoint.banner = banner;
    banner.catch(() => { endpoint.banner = undefined; }); // read again by the next connection
    return banner;
  }

  /** The adb server's `host-serial:<serial>:features`: the features the device's adbd announced. */
  private async adbFeaturesOf(serial: string): Promise<string[]> {
    const connection = await this.options.adb.connection();
    try {
      const request = Buffer.from(`host-serial:${serial}:features`);
      connection.write(Buffer.concat([Buffer.from(request.length.toString(16).padStart(4, '0')), request]));
      if (await connection.parser.readAscii(4) !== 'OKAY') return [];
      return (await connection.parser.readValue()).toString().split(',').filter(Boolean);
    } finally {
      connection.end();
    }
  }

  /**
   * Until the client has proven its key, it may send only a little, and only for a while, or the connection is
   * dropped.
   */
  private guardUnauthenticated(socket: AccessSocket, authenticated: () => boolean): void {
    const started = Date.now();
    const timer = setInterval(() => {
      if (authenticated() || socket.destroyed) {
        clearInterval(timer);
        return;
      }
      if (socket.bytesRead > UNAUTHENTICATED_BYTES || Date.now() - started > AUTH_DEADLINE_MS) socket.destroy();
    }, 50);
    timer.unref();
    socket.once('close', () => clearInterval(timer));
  }

  /** Reports the key a client offered after none of its signatures opened the endpoint (when it proved holding it). */
  private refuseOffered(endpoint: Endpoint, from: string, text: string, token: Buffer, signatures: readonly Buffer[]): void {
    let offered: ReturnType<typeof parseAdbPublicKey>;
    try {
      offered = parseAdbPublicKey(text);
    } catch {
      return;
    }
    const key = rsaKeyOf(offered.modulusHex, offered.exponent);
    if (!signatures.some((signature) => signatureMatches(key, token, signature))) return;
    if (!this.refusalsReported.first(`${endpoint.vendorUniqueIdentifier} ${offered.fingerprint} ${from.replace(/:\d+$/, '')}`)) return;
    const comment = offered.comment ? ` (${offered.comment})` : '';
    const why = endpoint.grant ? `is not one of ${endpoint.grant.userLogin}'s adb keys` : 'cannot open it: the device is not retained';
    this.options.report({
      vendorUniqueIdentifier: endpoint.vendorUniqueIdentifier,
      accepted: false,
      message: `adb connection refused from ${from}: key ${offered.fingerprint}${comment} ${why}`,
      remoteAddress: from,
      fingerprint: offered.fingerprint,
      userLogin: '',
      atMs: Date.now(),
    });
  }

  private reportOpened(endpoint: Endpoint, from: string, fingerprint: string, comment: string): void {
    this.options.report({
      vendorUniqueIdentifier: endpoint.vendorUniqueIdentifier,
      accepted: true,
      message: `adb connection opened by ${endpoint.grant?.userLogin} from ${from} with key ${fingerprint}${comment}`,
      remoteAddress: from,
      fingerprint,
      userLogin: endpoint.grant?.userLogin ?? '',
      atMs: Date.now(),
    });
  }

  private describePeer(socket: AccessSocket): string {
    return socket.tunnelPeer ?? `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
  }

  /** Nobody's keys open it any more, and every open connection drops at once (the release "within 1 s" rule). */
  private revoke(endpoint: Endpoint, reason: string): void {
    if (!endpoint.grant && endpoint.connections.size === 0) return;
    endpoint.grant = undefined;
    for (const socket of endpoint.connections) socket.destroy();
    endpoint.connections.clear();
    this.options.logger.info({ device: endpoint.vendorUniqueIdentifier, port: endpoint.port, reason }, 'adb access revoked');
  }

  /** Closes the listener and drops every open connection at once. */
  private close(endpoint: Endpoint, reason: string): void {
    if (this.endpoints.get(endpoint.vendorUniqueIdentifier) === endpoint) this.endpoints.delete(endpoint.vendorUniqueIdentifier);
    endpoint.server.close();
    for (const socket of endpoint.connections) socket.destroy();
    endpoint.connections.clear();
    this.options.logger.info({ device: endpoint.vendorUniqueIdentifier, port: endpoint.port, reason }, 'adb access endpoint closed');
  }
}

function grantOf(retention: Retention, logger: Logger): Grant {
  const verifiers: Grant['verifiers'] = [];
  for (const key of retention.adbKeys ?? []) {
    try {
      const parsed = readAdbPublicKeyStruct(Buffer.from(key.key));
      verifiers.push({ fingerprint: key.fingerprint, key: rsaKeyOf(parsed.modulusHex, parsed.exponent) });
    } catch (err) {
      logger.warn({ err, fingerprint: key.fingerprint }, 'the hub sent an adb key that does not parse; ignored');
    }
  }
  return { retainId: retention.retainId, userLogin: retention.userLogin || retention.userId || '?', verifiers };
}

function rsaKeyOf(modulusHex: string, exponent: number): KeyObject {
  const n = Buffer.from(modulusHex.padStart(modulusHex.length + (modulusHex.length % 2), '0'), 'hex');
  const e = Buffer.alloc(4);
  e.writeUInt32BE(exponent);
  return createPublicKey({ key: { kty: 'RSA', n: n.toString('base64url'), e: stripZeros(e).toString('base64url') }, format: 'jwk' });
}

function stripZeros(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start += 1;
  return bytes.subarray(start);
}

/** Whether `signature` is the key's PKCS#1 v1.5 signature of the token as a SHA-1 digest (what adb's AUTH sends). */
function signatureMatches(key: KeyObject, token: Buffer, signature: Buffer): boolean {
  try {
    const recovered = publicDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, signature);
    return recovered.equals(Buffer.concat([SHA1_DIGEST_INFO, token]));
  } catch {
    return false;
  }
}
