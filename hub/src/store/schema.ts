/** Kysely table types of the records store. One migration set serves embedded and external PostgreSQL. */
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { UsbHubReport } from '@devicelab/proto';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Json<T> = ColumnType<T, string, string>;
/** A jsonb column with a database default: optional on insert. */
type JsonWithDefault<T> = ColumnType<T, string | undefined, string>;

export interface UsersTable {
  id: Generated<string>;
  /** Login name: an e-mail address, or the built-in `admin`. Unique case-insensitively. */
  login: string;
  first_name: string | null;
  middle_name: string | null;
  last_name: string | null;
  is_active: Generated<boolean>;
  /** SHA-256 of the API token; the token itself is never stored. */
  token_sha256: Buffer | null;
  profile: JsonWithDefault<Record<string, string>>;
  created_at: CreatedAt;
  last_login_at: Timestamp | null;
  /** scrypt hash (auth/passwords.ts) of the password, for UI logins of other tools; never returned. */
  password_hash: string | null;
  /** Last authenticated request; a request after 30 idle minutes counts as a new login (auth/login-tracking.ts). */
  last_seen_at: Timestamp | null;
}

/** Spec UserProperty: free-form name/value pairs of a user, in the order given (`position`). */
export interface UserPropertiesTable {
  user_id: string;
  name: string;
  value: string;
  position: number;
}

export interface RolesTable {
  id: Generated<string>;
  name: string;
  entitlements: string[];
  built_in: Generated<boolean>;
  /** Longest lease of its holders in minutes, 0: none; null: the lab's (migration 035). */
  max_lease_minutes: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface UserRolesTable {
  user_id: string;
  role_id: string;
}

export interface GatewaysTable {
  id: Generated<string>;
  name: string;
  token_sha256: Buffer;
  public_address: string | null;
  public_port: number | null;
  connected: Generated<boolean>;
  last_seen_at: Timestamp | null;
  created_at: CreatedAt;
  /** Rows the gateway's metrics buffer dropped since it started, as last reported (migration 009). bigint as text. */
  metrics_dropped_rows: Generated<string>;
  version: string | null;
  hub_replica: string | null;
  /** The gateway's USB hubs as it last reported them (UsbHubReport[]), kept when it disconnects. */
  last_usb_hubs: Json<UsbHubReport[]> | null;
}

/** One `getprop` (Android) or lockdown (iOS) value, as the gateway reported it. */
export interface DevicePropertyValue { name: string; value: string }
/** A package on a device, as the gateway reported it. */
export interface InstalledPackage { identifier: string; version: string; buildVersion: string; system: boolean }

export interface DevicesTable {
  id: Generated<string>;
  /** adb serial / iOS UDID: how the gateway names the device; keeps the Guid stable across reconnects. */
  vendor_unique_identifier: string;
  gateway_id: string | null;
  name: string;
  operating_system: string;
  serial_number: string | null;
  model: string | null;
  manufacturer: string | null;
  friendly_model: string | null;
  operating_system_version: string | null;
  operating_system_build: string | null;
  product_type: string | null;
  hardware_model: string | null;
  device_class: string | null;
  form_factor: Generated<string>;
  vendor_device_name: string | null;
  mac_address: string | null;
  bluetooth_address: string | null;
  usb_location: string | null;
  usb_hub_serial_number: string | null;
  usb_hub_port_number: number | null;
  battery_status: Generated<string>;
  battery_percent: Generated<number>;
  disk_space: Generated<string>;
  disk_space_used: Generated<string>;
  /** Online/Offline as users see it; derived from readiness when the gateway reports. */
  availability: Generated<string>;
  /** Gateway's view: Ready, Unauthorized, Offline, Booting, Detached; plus the hub's `Rebooting`. */
  readiness: Generated<string>;
  readiness_detail: string | null;
  enabled: Generated<boolean>;
  deleted: Generated<boolean>;
  slot_number: number | null;
  notes: string | null;
  retained_by: string | null;
  retained_at: Timestamp | null;
  /** Id of the current retain, kept by a trigger (migration 007); null while not retained. */
  retain_id: Generated<string | null>;
  properties: JsonWithDefault<DevicePropertyValue[]>;
  installed_packages: JsonWithDefault<InstalledPackage[]>;
  last_inuse_at: Timestamp | null;
  last_connected_at: Timestamp | null;
  last_disconnected_at: Timestamp | null;
  created_at: CreatedAt;
  /** Passive metrics logging (spec 4.3 action=enabled; migration 009); on by default. */
  metrics_enabled: Generated<boolean>;
  /** Change stamp for cached lists, kept by the database (migration 014); bigint as text. */
  list_change: Generated<string>;
}

export interface ApplicationsTable {
  id: Generated<string>;
  display_name: string;
  application_identifier: string;
  version: string | null;
  build_version: string | null;
  operating_system: string;
  minimum_os_version: string | null;
  /** SHA-256 of the binary in the blob store (content address). */
  blob_sha256: string;
  file_name: string;
  file_byte_count: string;
  version_counter: number;
  icon_blob: string | null;
  vendor_application_name: string | null;
  supported_form_factors: Generated<string>;
  provision_expiration_date: Timestamp | null;
  provisions_all_devices: Generated<boolean>;
  /** UDIDs of the profile's ProvisionedDevices; null when no profile was read (see migration 016). */
  provisioned_devices: ColumnType<string[] | null, string | null | undefined, string | null>;
  signing_certificate_name: string | null;
  signing_certificate_in_profile: Generated<boolean>;
  app_team_identifier: string | null;
  agent_dylib_team_identifier: string | null;
  agent_dylib_embedded: Generated<boolean>;
  /** Android: the launcher activity found in the manifest (used by launch). */
  launch_activity: string | null;
  /** iOS: `iphoneos` or `iphonesimulator` (migration 015); NULL for Android and older uploads. */
  platform: string | null;
  application_errors: JsonWithDefault<string[]>;
  enabled: Generated<boolean>;
  notes: string | null;
  /** The uploader's display name at upload (migration 031); null for older uploads. */
  uploaded_by_name: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  /** Change stamp for cached lists, kept by the database (migration 014); bigint as text. */
  list_change: Generated<string>;
}

export interface AsyncJobsTable {
  id: Generated<string>;
  kind: string;
  owner_id: string;
  /** running -> complete -> delivered (after the completed status was returned once). */
  status: Generated<string>;
  result: Json<unknown> | null;
  created_at: CreatedAt;
  completed_at: Timestamp | null;
  last_polled_at: Timestamp;
  /** What the job does to a device, for reconciling it after a hub restart (domain/interrupted-jobs.ts). */
  intent: Json<JobIntent> | null;
  /** Set by a hub start that found the job still running and reconciles it. */
  interrupted_at: Timestamp | null;
  /** Percent done as the work reports it (installs; migration 024); 100 once it succeeded; null: not reported. */
  progress: number | null;
  /** The hub replica running the job (migration 019); null for jobs of hubs before replicas. */
  replica_id: string | null;
}

/** A hub process serving the lab (migration 019); live while its advisory lock is held. */
export interface HubReplicasTable {
  id: string;
  hostname: string;
  version: string;
  api_address: string | null;
  link_address: string | null;
  started_at: Generated<Date>;
  heartbeat_at: Generated<Date>;
}

/** A command one replica relays to the replica owning the gateway's link (fleet/command-relay.ts). */
export interface RelayedCommandsTable {
  id: string;
  owner_replica: string;
  requester_replica: string;
  kind: string;
  target: string;
  request: Json<unknown>;
  deadline: Timestamp;
  claimed_at: Timestamp | null;
  answer: Json<unknown> | null;
  created_at: Generated<Date>;
}

/** An install of an uploaded application on a device (as the request named it), until `deadline` (ISO time). */
export interface JobIntent {
  action: 'install';
  applicationId: string;
  deviceIdentifier: string;
  deadline: string;
}

export interface EventsTable {
  id: Generated<string>;
  event_type: string;
  event_date: CreatedAt;
  device_id: string | null;
  device_name: string | null;
  performed_by_id: string | null;
  performed_by_name: string | null;
  user_id: string | null;
  application_id: string | null;
  application_name: string | null;
  int_value: Generated<number>;
  bool_value: Generated<boolean>;
  string_value: string | null;
  message: string;
  is_success: Generated<boolean>;
  device_online_count: Generated<number>;
  device_inuse_count: Generated<number>;
  /** Insertion order (migration 006): the tie-break of events written at the same instant. bigint, read as text. */
  seq: ColumnType<string, never, never>;
  /** A DeviceRetained event of a retain made for a WebDriver session (migration 041). */
  automation_session: Generated<boolean>;
}

/** The library record an install through the API put on a device (migration 027). */
export interface InstalledRecordsTable {
  device_id: string;
  application_identifier: string;
  application_id: string;
}

/** Who made a device's next availability flip happen, and why (migration 029). */
export interface AvailabilityCausesTable {
  device_id: string;
  expected: string;
  reason: string;
  performed_by_id: string | null;
  performed_by_name: string | null;
  expires_at: Timestamp;
}

export interface UserAdbKeysTable {
  user_id: string;
  fingerprint: string;
  key: Buffer;
  comment: Generated<string>;
  added_at: CreatedAt;
}

export interface HubSettingsTable {
  key: string;
  value: string;
}

export interface WebhooksTable {
  id: Generated<string>;
  url: string;
  event_types: string[];
  /** Kept as given: it signs every delivery, so it must be readable; never returned or logged. */
  secret: string;
  created_by: string | null;
  created_at: CreatedAt;
}

/** A booking of a device (migration 030); the generated range `during` is the database's alone. */
export interface ReservationsTable {
  id: Generated<string>;
  device_id: string;
  user_id: string;
  starts_at: Timestamp;
  ends_at: Timestamp;
  note: Generated<string>;
  created_at: CreatedAt;
  created_by: string | null;
  /** Shared by the occurrences of one weekly series (migration 040). */
  series_id: string | null;
}

export interface ScreenSharesTable {
  id: Generated<string>;
  device_id: string;
  retain_id: string;
  token_sha256: Buffer | null;
  user_id: string | null;
  created_by: string | null;
  created_at: CreatedAt;
}

export interface DeviceWaitersTable {
  id: Generated<string>;
  /** Order of arrival (bigint as text). */
  place: Generated<string>;
  user_id: string;
  user_name: string;
  filter: Generated<string>;
  /** The parsed filter (`DeviceFilter`) as JSON for SQL's `device_matches_filter`; null for one device (migration 039). */
  filter_terms: ColumnType<unknown, string | null | undefined, string | null>;
  device_id: string | null;
  purpose: 'retain' | 'automation';
  lease_name: string | null;
  idle_minutes: number | null;
  replica_id: string;
  since: Generated<Date>;
  deadline: Timestamp;
  assigned_device: string | null;
  assigned_at: Timestamp | null;
}

/** The terms of a device's current retain (migration 035); a row whose retain_id is not the device's is stale. */
export interface DeviceLeasesTable {
  device_id: string;
  retain_id: string;
  user_id: string;
  lease_name: Generated<string>;
  started_at: Timestamp;
  last_used_at: Timestamp;
  idle_minutes: number | null;
  ends_at: Timestamp | null;
  warned_at: Timestamp | null;
}

export interface WebhookDeliveriesTable {
  id: ColumnType<string, never, never>;
  webhook_id: string;
  event_id: string;
  event_type: string;
  /** Deliveries of one key (the device Guid, '' for lab-wide events) go out one at a time, in id order. */
  order_key: string;
  status: Generated<string>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  claimed_until: Timestamp | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: CreatedAt;
  delivered_at: Timestamp | null;
}

/** Dashboard sign-ins (migration 013): only the cookie token's SHA-256 is kept. */
export interface WebSessionsTable {
  token_sha256: Buffer;
  user_id: string;
  created_at: Generated<Date>;
  expires_at: Date;
}

/** Written by triggers (migration 013); read by the event stream to replay after Last-Event-ID. bigint as text. */
export interface ChangeFeedTable {
  id: ColumnType<string, never, never>;
  kind: string;
  object_id: string;
  changed_at: Generated<Date>;
}

/** A stored binary's address; the row exists only once every chunk is written (migration 020). */
export interface BlobsTable {
  sha256: string;
  /** bigint as text. */
  byte_count: ColumnType<string, string | number, never>;
  chunk_count: number;
  created_at: CreatedAt;
}

export interface BlobChunksTable {
  sha256: string;
  /** 0, 1, ...: the chunks in order make the binary. */
  seq: number;
  data: Buffer;
}

/** The automation session map (migration 033). */
export interface AutomationSessionsTable {
  id: Generated<string>;
  /** The id the device's Appium server returned, unchanged. */
  session_id: string;
  device_id: string;
  vendor_unique_identifier: string;
  gateway_id: string | null;
  user_id: string;
  /** The retain the session holds its device by: another retain (or none) ends the session. */
  retain_id: string;
  request_id: string;
  created_at: Timestamp;
  last_command_at: Timestamp;
  new_command_timeout_s: number;
  state: Generated<'open' | 'closing' | 'closed'>;
  ended_at: Timestamp | null;
  end_reason: string | null;
}

export interface Database {
  web_sessions: WebSessionsTable;
  change_feed: ChangeFeedTable;
  users: UsersTable;
  roles: RolesTable;
  user_roles: UserRolesTable;
  user_properties: UserPropertiesTable;
  gateways: GatewaysTable;
  devices: DevicesTable;
  applications: ApplicationsTable;
  installed_records: InstalledRecordsTable;
  availability_causes: AvailabilityCausesTable;
  blobs: BlobsTable;
  blob_chunks: BlobChunksTable;
  async_jobs: AsyncJobsTable;
  events: EventsTable;
  hub_settings: HubSettingsTable;
  hub_replicas: HubReplicasTable;
  relayed_commands: RelayedCommandsTable;
  user_adb_keys: UserAdbKeysTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  reservations: ReservationsTable;
  screen_shares: ScreenSharesTable;
  automation_sessions: AutomationSessionsTable;
  device_waiters: DeviceWaitersTable;
  device_leases: DeviceLeasesTable;
}

export type UserRow = Selectable<UsersTable>;
export type DeviceRow = Selectable<DevicesTable>;
export type DeviceUpdate = Updateable<DevicesTable>;
export type NewDevice = Insertable<DevicesTable>;
export type ApplicationRow = Selectable<ApplicationsTable>;
export type GatewayRow = Selectable<GatewaysTable>;
export type EventRow = Selectable<EventsTable>;
