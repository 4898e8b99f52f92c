/**
 * This hub process as one replica of the lab: an id that changes with every start, when it started
 * and where it runs. Gateways record the replica their link landed on (`gateways.hub_replica`); the registry
 * (replica-registry.ts) records it in `hub_replicas` and keeps it live.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';

export interface HubReplica {
  id: string;
  hostname: string;
  startedAt: Date;
}

export const thisReplica: HubReplica = { id: randomUUID(), hostname: os.hostname(), startedAt: new Date() };

/**
 * A new run of the hub in this process gets a new identity (tests restart the hub in one process): the previous
 * run's jobs and links then belong to a replica that is gone, as after a process restart.
 */
export function beginReplicaRun(): void {
  thisReplica.id = randomUUID();
  thisReplica.startedAt = new Date();
}
