/** Test helpers for the domain and API tests: users, devices, a fake gateway directory, an HTTP harness. */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { Entitlement, type Entitlement as EntitlementName } from '@devicelab/shared';
import type { CommandAction, CommandResult } from '@devicelab/proto';
import type { AuthenticatedUser } from '../../src/auth/authenticated-user';
import type { ConnectedGateway, GatewayDirectory } from '../../src/gateways/gateway-directory';
import type { Db } from '../../src/store/database';
import type { NewDevice } from '../../src/store/schema';

export const ALL: readonly EntitlementName[] = Entitlement;

export async function createUser(
  db: Db, login: string, entitlements: readonly EntitlementName[] = ALL, names: { first?: string; last?: string } = {},
): Promise<AuthenticatedUser> {
  const row = await db.insertInto('users')
    .values({ login, first_name: names.first ?? null, last_name: names.last ?? null })
    .returning('id').executeTakeFirstOrThrow();
  const displayName = [names.first, names.last].filter(Boolean).join(' ') || login;
  return { id: row.id, login, displayName, entitlements: new Set(entitlements), roles: [] };
}

let serial = 0;
export async function insertDevice(db: Db, values: Partial<NewDevice> = {}) {
  serial += 1;
  const vuid = values.vendor_unique_identifier ?? `SER${process.pid}X${serial}`;
  return db.insertInto('devices').values({
    vendor_unique_identifier: vuid,
    serial_number: vuid,
    name: `Device ${serial}`,
    operating_system: 'Android',
    availability: 'Online',
    readiness: 'Ready',
    ...values,
  }).returningAll().executeTakeFirstOrThrow();
}

export class FakeGateways implements GatewayDirectory {
  readonly sent: { vuid: string; action: CommandAction }[] = [];
  reply: (vuid: string, action: CommandAction) => Promise<Partial<CommandResult>> = async () => ({ ok: true });
  gateways: ConnectedGateway[] = [];

  async sendCommand(vuid: string, action: CommandAction): Promise<CommandResult> {
    this.sent.push({ vuid, action });
    const r = await this.reply(vuid, action);
    return { commandId: 'c', ok: r.ok ?? true, errorMessage: r.errorMessage ?? '', text: r.text ?? '' };
  }

  connectedGateways(): ConnectedGateway[] {
    return this.gateways;
  }
}

export interface Running { url: string; close(): Promise<void> }

export async function listen(app: (req: never, res: never) => void): Promise<Running> {
  const server: Server = createServer(app as never);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
