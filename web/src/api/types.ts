/**
 * The REST models the dashboard reads are the hub's own wire models (shared/src/models.ts), imported type-only:
 * they vanish at build time, nothing of the shared package goes into the bundle, and a field renamed on the hub
 * fails the dashboard's type check (`npx tsc -p web`). Declared here: what the browser alone needs (the
 * `/Session` user, the Result and /Async envelopes as the client reads them).
 */
import type { FailureCode } from '../../../shared/src/failure-codes';

export type {
  Application, AutomationSession, Device, DeviceAccessTicket, DeviceProperty, FleetGatewayDescription as GatewayDescription, Role, UsbHub, UsbHubDevice, User,
} from '../../../shared/src/models';
export type { DeviceReadinessState as DeviceReadiness } from '../../../shared/src/readiness';
export type { FailureCode } from '../../../shared/src/failure-codes';

/** A Result as the client reads it (`data` on success, `errorMessage` and `errorCode` on failure). */
export interface Result<T = undefined> {
  isSuccess: boolean;
  errorMessage?: string;
  /** Hub extension: the failure's code (README "Failure codes"). */
  errorCode?: FailureCode;
  data?: T;
}

export interface AsyncStatus<T = unknown> {
  isComplete: boolean;
  data?: T;
  /** Hub extension: percent done while running, once the work reported one (installs). */
  progress?: number;
}

/** GET /apiv1/Session (a dashboard extension, not in the spec). */
export interface SessionUser {
  id: string;
  login: string;
  displayName: string;
  roles: string[];
  entitlements: string[];
}

/** GET /User/AdbKey: one of a user's registered adb keys. */
export interface AdbKey {
  fingerprint: string;
  comment: string;
  addedAt: string;
}

/** A booking of a device (extension /Reservation), as GET /Reservation and the event stream show it. */
export interface Reservation {
  id: string;
  deviceId: string;
  deviceName: string;
  reservedById: string;
  reservedByDisplayName: string;
  /** Wire dates (UTC); the calendars show them in the browser's time zone. */
  start: string;
  end: string;
  note: string;
  createdAt: string;
  createdById?: string;
  /** Shared by the occurrences of a weekly series. */
  seriesId?: string;
}
