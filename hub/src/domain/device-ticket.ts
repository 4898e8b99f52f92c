/**
 * DeviceAccessTicket authenticators (issue item 5): Ed25519-signed claims binding the device (vendor id and Guid),
 * the retaining user, the retain id and the issue time. The hub's key pair is created once and kept in
 * `hub_settings`; gateways get the public key in Welcome and verify tickets on their own
 * (`gateway/src/tickets/ticket-verifier.ts`). The format is `@devicelab/proto`'s `encodeDeviceTicket`.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { encodeDeviceTicket } from '@devicelab/proto';
import type { Db } from '../store/database';
import { settingOrCreate } from '../store/settings';

const TICKET_KEY_SETTING = 'ticket_signing_key';

export interface TicketKeys {
  privateKey: KeyObject;
  /** SPKI DER, as Welcome.ticket_public_key carries it. */
  publicKeyDer: Buffer;
}

interface TicketClaims {
  vendorUniqueIdentifier: string;
  deviceId: string;
  userId: string;
  retainId: string;
  issuedAt: Date;
}

function ticketKeysFromPem(privateKeyPem: string): TicketKeys {
  const privateKey = createPrivateKey(privateKeyPem);
  return { privateKey, publicKeyDer: createPublicKey(privateKey).export({ type: 'spki', format: 'der' }) };
}

function newPrivateKeyPem(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

export function newTicketKeys(): TicketKeys {
  return ticketKeysFromPem(newPrivateKeyPem());
}

/** The hub's ticket key pair: created on first use, the same on every later start (and every replica). */
export async function loadTicketKeys(db: Db): Promise<TicketKeys> {
  return ticketKeysFromPem(await settingOrCreate(db, TICKET_KEY_SETTING, newPrivateKeyPem));
}

export function signDeviceTicket(keys: TicketKeys, claims: TicketClaims): string {
  return encodeDeviceTicket({
    v: 1,
    vuid: claims.vendorUniqueIdentifier,
    device: claims.deviceId,
    user: claims.userId,
    retain: claims.retainId,
    iat: claims.issuedAt.getTime(),
  }, (data) => sign(null, data, keys.privateKey));
}
