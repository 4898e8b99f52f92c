/**
 * Checks DeviceAccessTicket authenticators on the gateway, without asking the hub: the Ed25519 signature with the
 * hub's public key (Welcome.ticket_public_key), the device the ticket names, and that its retain is still the
 * device's current one (Welcome.retentions, then HubMessage.retention on every retain and release).
 *
 * Between sessions the last known state is kept: a hub restart does not cut off the user holding a device, and
 * the next Welcome replaces the whole state.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { decodeDeviceTicket, type DeviceTicketClaims, type Retention } from '@devicelab/proto';

type TicketVerdict =
  | { valid: true; claims: DeviceTicketClaims }
  | { valid: false; reason: string };

export class TicketVerifier {
  private publicKey: KeyObject | undefined;
  /** vendor unique identifier -> current retain id. */
  private readonly retains = new Map<string, string>();

  /** Welcome: the hub's key and every current retain of this gateway's devices (replaces what was known). */
  welcome(publicKeyDer: Buffer | undefined, retentions: readonly Retention[]): void {
    this.publicKey = publicKeyDer && publicKeyDer.length > 0
      ? createPublicKey({ key: publicKeyDer, format: 'der', type: 'spki' })
      : undefined;
    this.retains.clear();
    for (const retention of retentions) this.apply(retention);
  }

  /** A retain (retain id) or a release (empty retain id) of one device. */
  apply(retention: Retention): void {
    if (retention.retainId) this.retains.set(retention.vendorUniqueIdentifier, retention.retainId);
    else this.retains.delete(retention.vendorUniqueIdentifier);
  }

  /** The device's current retain id, if it is retained. */
  retainOf(vendorUniqueIdentifier: string): string | undefined {
    return this.retains.get(vendorUniqueIdentifier);
  }

  /** Whether `authenticator` opens the device `vendorUniqueIdentifier` right now. */
  verifyDeviceTicket(authenticator: string, vendorUniqueIdentifier: string): TicketVerdict {
    if (!this.publicKey) return { valid: false, reason: 'no ticket key from the hub yet' };
    const ticket = decodeDeviceTicket(authenticator.trim());
    if (!ticket) return { valid: false, reason: 'not a device ticket' };
    let signed = false;
    try {
      signed = verify(null, ticket.signed, this.publicKey, ticket.signature);
    } catch {
      signed = false;
    }
    if (!signed) return { valid: false, reason: 'bad signature' };
    if (ticket.claims.vuid !== vendorUniqueIdentifier) return { valid: false, reason: 'ticket is for another device' };
    if (this.retains.get(vendorUniqueIdentifier) !== ticket.claims.retain) {
      return { valid: false, reason: 'the retain of this ticket has ended' };
    }
    return { valid: true, claims: ticket.claims };
  }
}
