/**
 * Remote adb for the retainer (issue 11): while an Android device is retained, a TCP port of this gateway speaks
 * the adbd protocol for it, so `adb connect <gateway>:<port>` on the user's machine gives a real adb transport.
 *
 * The adbd side is adbkit's TCP/USB bridge socket (`tcpusb/socket`, what STF runs): it answers CNXN with an
 * AUTH challenge, verifies the client's signature, and forwards every stream the client opens to the device
 * through this host's adb server. We run our own listener around it rather than `createTcpUsbBridge` so that
 * each connection's `auth` callback knows where the connection comes from (for the access events) and so that
 * a release can drop every connection at once. The `auth` callback is where "only the current retainer's keys"
 * is decided: the key the client proves it holds must be one the hub sent in the device's Retention.
 */
import net from 'node:net';
import type { Client } from '@devicefarmer/adbkit';
import AdbTcpUsbSocket from '@devicefarmer/adbkit/dist/src/adb/tcpusb/socket';
import type { AccessEndpoint, DeviceAccessEvent, Retention } from '@devicelab/proto';
import { readAdbPublicKeyStruct, type Logger } from '@devicelab/shared';

export interface PortRange {
  first: number;
  last: number;
}

/** adb's A_OPEN packet command ('OPEN' little-endian). */
const A_OPEN = 0x4e45504f;

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
  /** A client installed or removed packages through the endpoint: read them again, so the hub's record follows. */
  packagesChanged(vendorUniqueIdentifier: string): void;
}

/** A stream opened with one of these may change the installed packages (legacy pm, cmd, abb). */
const PACKAGE_SERVICES = /\b(pm|install|uninstall|install-multiple|package)\b/;
/** Packages are read again once the connection has been quiet this long after such a stream. */
const PACKAGE_SETTLE_MS = 500;

/** The retainer's keys, by modulus (what a client's key is compared on), with their fingerprints. */
interface Grant {
  retainId: string;
  userLogin: string;
  keys: Map<string, string>;
}

interface Endpoint {
  vendorUniqueIdentifier: string;
  server: net.Server;
  port: number;
  grant: Grant;
  connections: Set<net.Socket>;
}

/** What adbkit's bridge hands the `auth` callback: a node-forge RSA key with its fingerprint. */
interface OfferedKey {
  n: { toString(radix: number): string };
  fingerprint?: string;
  comment?: string;
}

export class AdbAccessEndpoints {
  private readonly endpoints = new Map<string, Endpoint>();
  /** `address:port` of local sockets the hub tunnel opened -> who is behind them (for access events). */
  private readonly tunnelPeers = new Map<string, string>();
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
    if (!retention.retainId || this.stopped) {
      if (current) this.close(current, 'released');
      return answer(0);
    }
    const grant = grantOf(retention, this.options.logger);
    if (current && current.grant.retainId === grant.retainId) {
      current.grant = grant; // the retainer's keys changed: new connections see the new set
      return answer(current.port);
    }
    if (current) this.close(current, 'retained by someone else');
    if (!this.options.ownsAndroidDevice(vuid)) return answer(0);
    const endpoint = await this.listen(vuid, grant);
    return answer(endpoint?.port ?? 0);
  }

  /** Welcome: the hub's whole current set; endpoints of devices not in it close. */
  async replaceAll(retentions: readonly Retention[]): Promise<AccessEndpoint[]> {
    const retained = new Set(retentions.filter((r) => r.retainId).map((r) => r.vendorUniqueIdentifier));
    for (const endpoint of [...this.endpoints.values()]) {
      if (!retained.has(endpoint.vendorUniqueIdentifier)) this.close(endpoint, 'not retained at the hub');
    }
    const answers: AccessEndpoint[] = [];
    for (const retention of retentions) answers.push(await this.apply(retention));
    return answers;
  }

  /** The device left this host (unplugged, USB port off): its connections drop; the endpoint stays for its return. */
  deviceGone(vendorUniqueIdentifier: string): void {
    const endpoint = this.endpoints.get(vendorUniqueIdentifier);
    if (!endpoint) return;
    for (const socket of endpoint.connections) socket.destroy();
  }

  /** The endpoint's port while the device is retained and served here. */
  portOf(vendorUniqueIdentifier: string): number | undefined {
    return this.endpoints.get(vendorUniqueIdentifier)?.port;
  }

  /** Remembers that a local connection from `address:port` carries a hub tunnel for `peer` (its access events say so). */
  markTunnelPeer(localAddress: string, localPort: number, peer: string): () => void {
    const key = `${localAddress}:${localPort}`;
    this.tunnelPeers.set(key, peer);
    return () => this.tunnelPeers.delete(key);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const endpoint of [...this.endpoints.values()]) this.close(endpoint, 'gateway stopping');
  }

  private async listen(vuid: string, grant: Grant): Promise<Endpoint | undefined> {
    const { first, last } = this.options.ports;
    const used = new Set([...this.endpoints.values()].map((e) => e.port));
    for (let port = first; port <= last; port += 1) {
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
      const endpoint: Endpoint = { vendorUniqueIdentifier: vuid, server, port, grant, connections: new Set() };
      server.on('connection', (socket) => this.accept(endpoint, socket));
      server.on('error', (err) => this.options.logger.warn({ err, device: vuid }, 'adb access endpoint failed'));
      this.endpoints.set(vuid, endpoint);
      this.options.logger.info({ device: vuid, port }, 'adb access endpoint open');
      return endpoint;
    }
    this.options.logger.error({ device: vuid, ...this.options.ports }, 'no free port for an adb access endpoint');
    return undefined;
  }

  private accept(endpoint: Endpoint, socket: net.Socket): void {
    endpoint.connections.add(socket);
    socket.on('close', () => endpoint.connections.delete(socket));
    socket.on('error', () => socket.destroy());
    const from = this.describePeer(socket);
    const bridge = new AdbTcpUsbSocket(this.options.adb, endpoint.vendorUniqueIdentifier, socket, {
      auth: (key: OfferedKey) => this.authorize(endpoint, key, from, socket),
    } as never);
    let packagesTimer: NodeJS.Timeout | undefined;
    let packagesDirty = false;
    bridge.on('userActivity', (packet: { command: number; data?: Buffer }) => {
      if (packet.command === A_OPEN && packet.data && PACKAGE_SERVICES.test(packet.data.toString('latin1'))) packagesDirty = true;
      if (!packagesDirty) return;
      clearTimeout(packagesTimer);
      packagesTimer = setTimeout(() => {
        packagesDirty = false;
        this.options.packagesChanged(endpoint.vendorUniqueIdentifier);
      }, PACKAGE_SETTLE_MS);
    });
    bridge.on('error', (err: Error) => this.options.logger.debug({ err, device: endpoint.vendorUniqueIdentifier }, 'adb access connection error'));
  }

  /** adbkit calls this once the client proved it holds `key`: resolves to accept, rejects to refuse. */
  private authorize(endpoint: Endpoint, key: OfferedKey, from: string, socket: net.Socket): Promise<void> {
    const { grant } = endpoint;
    const fingerprint = key.fingerprint ?? '';
    const accepted = grant.keys.has(key.n.toString(16)) && endpoint.connections.has(socket);
    const comment = key.comment ? ` (${key.comment})` : '';
    this.options.report({
      vendorUniqueIdentifier: endpoint.vendorUniqueIdentifier,
      accepted,
      message: accepted
        ? `adb connection opened by ${grant.userLogin} from ${from} with key ${fingerprint}${comment}`
        : `adb connection refused from ${from}: key ${fingerprint}${comment} is not one of ${grant.userLogin}'s adb keys`,
      remoteAddress: from,
      fingerprint,
      userLogin: accepted ? grant.userLogin : '',
      atMs: Date.now(),
    });
    return accepted ? Promise.resolve() : Promise.reject(new Error('not a key of the retainer'));
  }

  private describePeer(socket: net.Socket): string {
    const direct = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
    return this.tunnelPeers.get(direct) ?? direct;
  }

  /** Closes the listener and drops every open connection at once (the release "within 1 s" rule). */
  private close(endpoint: Endpoint, reason: string): void {
    if (this.endpoints.get(endpoint.vendorUniqueIdentifier) === endpoint) this.endpoints.delete(endpoint.vendorUniqueIdentifier);
    endpoint.server.close();
    for (const socket of endpoint.connections) socket.destroy();
    endpoint.connections.clear();
    this.options.logger.info({ device: endpoint.vendorUniqueIdentifier, port: endpoint.port, reason }, 'adb access endpoint closed');
  }
}

function grantOf(retention: Retention, logger: Logger): Grant {
  const keys = new Map<string, string>();
  for (const key of retention.adbKeys ?? []) {
    try {
      keys.set(readAdbPublicKeyStruct(Buffer.from(key.key)).modulusHex, key.fingerprint);
    } catch (err) {
      logger.warn({ err, fingerprint: key.fingerprint }, 'the hub sent an adb key that does not parse; ignored');
    }
  }
  return { retainId: retention.retainId, userLogin: retention.userLogin || retention.userId || '?', keys };
}
