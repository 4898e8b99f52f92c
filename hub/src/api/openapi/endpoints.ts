/**
 * The one in-code description of the REST API: every mounted route (method + path under /apiv1), the operations
 * a POST selects with a verb key or `action=`, their parameters, bodies, results and entitlements. The OpenAPI
 * document is generated from it (`document.ts`); hub/test/api/openapi.test.ts fails when it and the routes
 * actually mounted on the express app differ.
 */
import type { RouteParameters } from '../../http/handler';
import { arrayOf, ref, resultOf } from './schemas';

type Schema = Record<string, unknown>;

export interface ParamDescription {
  name: string;
  type: 'guid' | 'string' | 'bool' | 'int' | 'date' | 'deviceId' | 'enum';
  values?: string[];
  required?: boolean;
  description?: string;
  /** Other names the route reads for it (`deviceId` for `id`). */
  aliases?: string[];
  /** Accepted and ignored, for this reason: a vendor client offers the key but nothing gives it a meaning here. */
  ignored?: string;
}

export interface OperationDescription {
  /** How the request selects it: `action=retain`, or a verb key (`update`, `delete`, `add`); '' for plain GETs. */
  select: string;
  summary: string;
  entitlement: string;
  params?: ParamDescription[];
  body?: 'json' | 'multipart';
  /** JSON keys of the body (update/add models). */
  bodyKeys?: string[];
  response: Schema;
  /** Replies an AsyncResponse (or with wait=true the outcome). */
  async?: boolean;
}

export interface EndpointDescription {
  method: 'get' | 'post' | 'delete';
  path: string;
  operations: OperationDescription[];
}

const p = (name: string, type: ParamDescription['type'], description?: string, extra: Partial<ParamDescription> = {}):
  ParamDescription => ({ name, type, description, ...extra });
const required = (param: ParamDescription): ParamDescription => ({ ...param, required: true });
/** A device identifier; the routes that read `id` also read it as `deviceId`. */
const deviceId = (name = 'id') => required(p(name, 'deviceId', 'The device Guid, serial number or vendor unique identifier.',
  name === 'id' ? { aliases: ['deviceId'] } : {}));
const result = ref('ResultModel');
const detail = [
  p('properties', 'bool', 'Include the properties field.'),
  p('applications', 'bool', 'Include managed installed applications (installedApplications).'),
  p('allApplications', 'bool', 'Include every installed application; unmanaged ones carry the all-zero Guid.'),
];
const deviceFilters = [
  p('id', 'guid'), p('name', 'string'), p('operatingSystem', 'enum', undefined, { values: ['Unknown', 'iOS', 'Android'] }),
  p('availability', 'enum', undefined, { values: ['Offline', 'Online'] }), p('enabled', 'bool'), p('deleted', 'bool'),
  p('slotNumber', 'int'), p('notes', 'string'),
  // The vendor C# client's device filter keys (wire rule 24, docs/wire-rules.md).
  p('anyId', 'string', 'The device Guid, serial number or vendor unique identifier.'),
  p('vendorUniqueIdentifier', 'string'), p('operatingSystemVersion', 'string'),
  p('retained', 'bool', 'true: retained by anyone; false: not retained.'),
  p('retainedBy', 'string', 'The retaining user: Guid or login.'),
  p('retainedByDisplayName', 'string', 'The retaining user\'s display name (any letter case).'),
  p('bundleInstalled', 'string', 'A package name / bundle id installed on the device.'),
  p('disableMetrics', 'bool', 'true: passive metrics logging is off (action=enabled on /Device/Metrics); false: on.'),
  // The rest of the C# client's DeviceProperties: neither it nor the spec says what they select.
  ...['releaseFlags', 'hardDelete', 'supportedFormFactors', 'simulatedBattery', 'chargeStartDate', 'agentStatus']
    .map((name) => p(name, 'string', undefined, { ignored: 'the C# client offers it (DeviceProperties) without a meaning, '
      + 'and this hub has no such device property.' })),
  p('filter', 'string', 'Extension: the filter people type (os=android,minOs=13,maxOs=14,osVersion=14.1,model=..,name=..,'
    + 'id=..,formFactor=phone,app=<package>,free,online); README "Device filters".'),
];
const reportFilters = [
  p('applicationId', 'guid'), p('deviceId', 'deviceId'), p('userId', 'guid'), p('fromDate', 'date'), p('toDate', 'date'),
  p('days', 'int'), p('skip', 'int'), p('take', 'int'),
];
const userFields = ['UserName', 'Email', 'IsActive', 'FirstName', 'MiddleName', 'LastName', 'Notes', 'Organization',
  'Title', 'Location', 'Address1', 'Address2', 'City', 'Region', 'PostalCode', 'Country', 'HomePhone', 'MobilePhone',
  'OfficePhone', 'FaxPhone', 'Password', 'Roles'];
const REPORTS = 'UserList, DeviceList and ApplicationList';
const roleRef = [p('id', 'guid', 'The role Guid; or give name.'), p('name', 'string', 'The role name (any letter case); or give id.')];

export const ENDPOINTS: EndpointDescription[] = [
  { method: 'get', path: '/Application', operations: [{
    select: '', summary: 'List applications (bare array; [] without the entitlement).', entitlement: 'ApplicationList',
    params: [p('id', 'guid'), p('displayName', 'string'), p('applicationIdentifier', 'string'), p('version', 'string'),
      p('buildVersion', 'string'), p('operatingSystem', 'enum', undefined, { values: ['Unknown', 'iOS', 'Android'] }),
      p('minimumOperatingSystemVersion', 'string'), p('applicationBlob', 'string'), p('originalApplicationBlob', 'string'),
      p('fileName', 'string'),
      // The C# client's ApplicationProperties beside the spec's.
      p('idOrName', 'string', 'The application Guid, or its display name (any letter case).'),
      p('buildVersionOrVersion', 'string', 'Matches buildVersion or version (any letter case).'),
      p('uploadedVersionCounter', 'int', 'Matches versionCounter (1 for the first upload of an applicationIdentifier).'),
      p('provisionsAllDevices', 'bool')],
    response: arrayOf(ref('Application')) }] },
  { method: 'post', path: '/Application', operations: [
    { select: 'add', summary: 'Upload an .apk, an .ipa or a zipped simulator .app (.zip) (multipart; the first part with a filename).', entitlement: 'ApplicationUpload',
      body: 'multipart', async: true, response: resultOf(ref('Application')) },
    { select: 'action=install', summary: 'Install an application on a device.', entitlement: 'DeviceApplicationManagement',
      params: [required(p('id', 'guid')), deviceId('deviceId'), p('force', 'bool'), p('nativeAutomation', 'bool')],
      async: true, response: ref('InstallResult') },
    { select: 'action=uninstall', summary: 'Uninstall an application from a device.', entitlement: 'DeviceApplicationManagement',
      params: [required(p('id', 'guid')), deviceId('deviceId'),
        p('removedata', 'bool', 'Remove user data; omitted = true.'),
        p('removedate', 'bool', 'Alternate form spelling; omitted = false.')],
      response: result },
    { select: 'action=uninstallBundle', summary: 'Uninstall a package by its bundle id / package name.',
      entitlement: 'DeviceApplicationManagement',
      params: [required(p('bundleId', 'string')), deviceId('deviceId'),
        p('removedata', 'bool', 'Remove user data; omitted = true.'), p('removedate', 'bool', 'Alternate form spelling.')],
      response: result },
    { select: 'action=launch', summary: 'Launch an application on a device.', entitlement: 'DeviceConnect',
      params: [required(p('id', 'guid')), deviceId('deviceId'), p('startOnly', 'bool'), p('arguments', 'string')],
      async: true, response: result },
    { select: 'update', summary: 'Update an application: displayName; extensions enabled (a disabled application refuses installs) and notes.',
      entitlement: 'ApplicationModify', params: [required(p('id', 'guid'))], body: 'json', bodyKeys: ['displayName', 'enabled', 'notes'],
      response: result },
    { select: 'delete', summary: 'Delete an application; all=true deletes every upload of its applicationIdentifier.',
      entitlement: 'ApplicationDelete', params: [required(p('id', 'guid')), p('all', 'bool')], response: result },
  ] },
  { method: 'get', path: '/Device', operations: [{
    select: '', summary: 'List devices (bare array; [] without the entitlement).', entitlement: 'DeviceList',
    params: [...deviceFilters, ...detail], response: arrayOf(ref('Device')) }] },
  { method: 'get', path: '/Device/Available', operations: [{
    select: '', summary: 'Devices available to the caller.', entitlement: 'DeviceList',
    params: [...deviceFilters, ...detail], response: arrayOf(ref('Device')) }] },
  { method: 'get', path: '/Device/WaitingLine', operations: [{
    select: '', summary: 'The waiting line (extension): requests waiting for a device, first come first, with what they '
      + 'wait for, since when, their purpose and the hub replica holding them.', entitlement: 'DeviceReleaseAny',
    response: resultOf(arrayOf(ref('Waiter'))) }] },
  { method: 'get', path: '/Device/Log', operations: [{
    select: '', summary: 'The device system log.', entitlement: 'DeviceList',
    params: [deviceId(), p('lines', 'int', 'Most recent lines; default 1000.')], response: resultOf({ type: 'string' }) }] },
  { method: 'get', path: '/Device/AppiumLog', operations: [{
    select: '', summary: 'The automation server log.', entitlement: 'DeviceList',
    params: [deviceId(), p('currentSessionOnly', 'bool', 'Only the current (or else the last) automation session\'s lines.')],
    response: resultOf({ type: 'string' }) }] },
  { method: 'get', path: '/Device/AutomationSession', operations: [{
    select: '', summary: 'Extension: the device\'s open automation session (WebDriver, /Appium): who, since when, last command; no data when none runs.',
    entitlement: 'DeviceList', params: [deviceId()], response: resultOf(ref('AutomationSession')) }] },
  { method: 'post', path: '/Device', operations: [
    { select: 'action=retain', summary: 'Retain (exclusively claim) a device. Extensions: `wait=<seconds>` waits in the '
      + 'lab\'s first-come waiting line (at most 900 s) for `id` or for the first device matching `filter`; `lease` names '
      + 'the caller\'s lease (a device held under another lease name is refused with LEASE_CONFLICT); `idleMinutes` asks '
      + 'for this retain\'s own idle time (within /Settings retainIdleMaxMinutes).', entitlement: 'DeviceConnect',
      params: [p('id', 'deviceId', 'The device Guid, serial number or vendor unique identifier (required without filter).',
        { aliases: ['deviceId'] }),
        p('filter', 'string', 'Extension, with wait: any device matching this (CLI filter syntax: os=android,minOs=13,'
          + 'osVersion=14.1,model=Pixel,name=..,id=..,formFactor=phone,app=<package>).'),
        p('wait', 'string', 'Extension: seconds to wait in line for a device (0 to 900); a boolean is ignored as elsewhere.'),
        p('lease', 'string', 'Extension: the lease name (at most 200 characters), e.g. a CI job id.'),
        p('idleMinutes', 'int', 'Extension: release after this many idle minutes (0: never, if the lab allows).')],
      response: resultOf(ref('DeviceAccessTicket')) },
    { select: 'action=renew', summary: 'Renew the caller\'s lease of a device (extension) before it ends: it then ends `minutes` '
      + 'from now (default and at most the caller\'s maximum lease length: /Settings leaseMaxMinutes or their roles\' '
      + 'maxLeaseMinutes; beyond it LEASE_LIMIT). Counts as use (the idle time starts again).', entitlement: 'DeviceConnect',
      params: [deviceId(), p('minutes', 'int', 'The new lease length from now, in minutes.')],
      response: resultOf({ type: 'object', properties: { leaseEndTime: { type: 'string', format: 'date-time' } } }) },
    { select: 'action=release', summary: 'Release a retained device.',
      entitlement: 'DeviceReleaseAny (only for another user\'s retain)', params: [deviceId()], response: result },
    { select: 'action=reboot', summary: 'Reboot a device.', entitlement: 'DeviceReboot', params: [deviceId()], response: result },
    { select: 'action=enable', summary: 'Enable a device.', entitlement: 'DeviceEnablement', params: [deviceId()], response: result },
    { select: 'action=disable', summary: 'Disable a device.', entitlement: 'DeviceEnablement', params: [deviceId()], response: result },
    { select: 'action=reset', summary: 'Reset a device.', entitlement: 'DeviceApplicationManagement (uninstallAll), DeviceReboot (reboot)',
      params: [deviceId(), p('uninstallAll', 'bool'), p('reboot', 'bool')], response: result },
    { select: 'update', summary: 'Update device properties.', entitlement: 'DeviceList + DeviceModify / DeviceEnablement / DeviceDelete per key',
      params: [deviceId()], body: 'json', bodyKeys: ['name', 'slotNumber', 'enabled', 'deleted', 'notes'], response: result },
    { select: 'delete', summary: 'Delete an offline device.', entitlement: 'DeviceList + DeviceDelete', params: [deviceId()], response: result },
  ] },
  { method: 'get', path: '/Device/Metrics', operations: [{
    select: '', summary: 'Query device metrics (spec 4.3); the answer is a document (attachment): InfluxDB 1.x JSON or CSV.',
    entitlement: 'DeviceList',
    params: [deviceId(),
      required(p('table', 'string', 'Comma-separated: usb_hub, log, health_check, sample.')),
      p('fields', 'string', 'Comma-separated field names (`Used` or `Memory: Used`); default all.'),
      p('aggr', 'string', 'Comma-separated: count, sum, mean, median, mode, spread, stddev, min, max, first, last, percentile_NN; needs fields.'),
      p('marker', 'string', 'Marker name: the periods of its most recent entries (start/end ignored).'),
      p('markerLimit', 'int', 'Marker entries to use; default 1.'), p('markerOffset', 'int', 'Marker entries to skip.'),
      p('limit', 'int', 'Rows per series; required without marker, start and end.'), p('offset', 'int', 'Needs limit.'),
      p('start', 'date'), p('end', 'date'), p('groupBy', 'string', 'One field name: a series per value.'),
      p('orderBy', 'string', '`time`, `time asc` or `time desc`.'), p('format', 'string', '`default` or `csv`.'),
      p('filename', 'string', 'Default metrics-<device name>; the extension follows the format.'),
      p('timeout', 'int', 'Seconds; default 120.')],
    response: { type: 'object', description: '{"results":[{"statement_id":0,"series":[{"name","tags"?,"columns","values"}]}]} or CSV' } }] },
  { method: 'post', path: '/Device/Metrics', operations: [
    { select: 'action=startmarker', summary: 'Start a named metrics marker on a device.', entitlement: 'DeviceList',
      params: [deviceId(), required(p('name', 'string'))], response: result },
    { select: 'action=stopmarker', summary: 'Stop the open marker of that name on that device.', entitlement: 'DeviceList',
      params: [deviceId(), required(p('name', 'string'))], response: result },
    { select: 'action=enabled', summary: 'Turn passive metrics logging of a device on or off.', entitlement: 'DeviceList + DeviceModify',
      params: [deviceId(), required(p('enable', 'bool'))], response: result },
  ] },
  { method: 'get', path: '/Async', operations: [{
    select: '', summary: 'Poll an async operation; a completed status is returned once.', entitlement: 'none (own jobs)',
    params: [required(p('id', 'guid'))], response: { oneOf: [ref('AsyncStatus'), ref('ResultModel')] } }] },
  { method: 'get', path: '/Service', operations: [{
    select: '', summary: 'Hub and gateway information.', entitlement: 'none', response: ref('HubInformation') }] },
  { method: 'get', path: '/Gateway', operations: [{
    select: '', summary: 'Connected gateways with their USB hubs and every hub port.', entitlement: 'SystemViewGateways',
    response: arrayOf(ref('GatewayDescription')) }] },
  { method: 'post', path: '/Gateway/UsbHub', operations: [
    { select: 'update', summary: 'Switch a hub port (every port of the hub without usbHubPort).', entitlement: 'SystemManageUsbHubs',
      params: [required(p('id', 'string', 'Serial number of the USB hub.')), p('usbHubPort', 'int'),
        required(p('usbHubPortState', 'enum', 'Sync is accepted for Data.', { values: ['Off', 'Data', 'Charge'] }))], response: result },
    { select: 'action=reboot', summary: 'Reboot a USB hub (it reconnects by itself).', entitlement: 'SystemManageUsbHubs',
      params: [required(p('id', 'string', 'Serial number of the USB hub.'))], response: result },
  ] },
  { method: 'post', path: '/Device/UsbPort', operations: [{
    select: 'update', summary: "Switch the hub port of a device (`id=*`: every device's port); Off and Charge take it Offline.",
    entitlement: 'SystemManageUsbHubs',
    params: [required(p('id', 'string', 'Device Guid, serial number or vendor unique identifier, or * for every device.',
      { aliases: ['deviceId'] })),
      required(p('usbHubPortState', 'enum', 'Sync is accepted for Data.', { values: ['Off', 'Data', 'Charge'] }))], response: result }] },
  { method: 'get', path: '/Report/History', operations: [{
    select: '', summary: 'Event history.', entitlement: REPORTS, params: reportFilters, response: ref('EventHistory') }] },
  { method: 'get', path: '/Report/Usage', operations: [{
    select: '', summary: 'Device usage.', entitlement: REPORTS, params: reportFilters, response: ref('DeviceUsageHistory') }] },
  { method: 'get', path: '/Report/Availability', operations: [{
    select: '', summary: 'Availability timeline.', entitlement: REPORTS,
    params: [p('fromDate', 'date'), p('toDate', 'date'), p('days', 'int'), p('window', 'string', 'hh:mm:ss')],
    response: resultOf(arrayOf(ref('AvailabilityPoint'))) }] },
  ...(['get', 'post'] as const).map((method): EndpointDescription => ({ method, path: '/Report', operations: [{
    select: '', summary: 'Alternate form: type=history|usage.', entitlement: REPORTS,
    params: [required(p('type', 'enum', undefined, { values: ['history', 'usage'] })), ...reportFilters],
    response: { oneOf: [ref('EventHistory'), ref('DeviceUsageHistory'), ref('ResultModel')] } }] })),
  { method: 'get', path: '/User', operations: [{
    select: '', summary: 'List users (only the caller without UserList).', entitlement: 'UserList',
    params: [p('id', 'guid'), p('userName', 'string', 'The login (e-mail).', { aliases: ['email'] }), p('isActive', 'bool'),
      ...userFields.filter((f) => !['UserName', 'Email', 'IsActive', 'Password', 'Roles'].includes(f)).map((f) => p(f, 'string'))],
    response: arrayOf(ref('User')) }] },
  { method: 'post', path: '/User', operations: [
    { select: 'update', summary: 'Update a user.', entitlement: 'UserModify (UserModifySelf for oneself)',
      params: [required(p('id', 'guid'))], body: 'json', bodyKeys: userFields, response: result },
    { select: 'add', summary: 'Import a user (roles default to Tester).', entitlement: 'UserImport', body: 'json',
      bodyKeys: userFields, response: result },
    { select: 'action=generateToken', summary: 'Issue a new API token for a user (extension).', entitlement: 'UserModify',
      params: [required(p('id', 'guid'))], response: resultOf({ type: 'object', properties: { apiToken: { type: 'string' } } }) },
    { select: 'action=addAdbKey', summary: 'Register an adb public key (the text of ~/.android/adbkey.pub) for a user (extension).',
      entitlement: 'UserModify (UserModifySelf for oneself)', body: 'json', bodyKeys: ['key'],
      params: [required(p('id', 'guid')), p('key', 'string', 'The text of adbkey.pub (or a JSON body {"key": ...}).')],
      response: resultOf(ref('AdbKey')) },
    { select: 'action=removeAdbKey', summary: 'Remove one of a user\'s adb public keys (extension).',
      entitlement: 'UserModify (UserModifySelf for oneself)',
      params: [required(p('id', 'guid')), required(p('fingerprint', 'string', 'The key\'s fingerprint as GET /User/AdbKey shows it.'))],
      response: result },
  ] },
  { method: 'get', path: '/User/AdbKey', operations: [{
    select: '', summary: 'A user\'s adb public keys (extension): fingerprint, comment, date added.', entitlement: 'UserList (none for oneself)',
    params: [required(p('id', 'guid'))], response: arrayOf(ref('AdbKey')) }] },
  { method: 'get', path: '/Role', operations: [{
    select: '', summary: 'List roles and their entitlements (extension); without UserRolesModify only the caller\'s roles.', entitlement: 'any authenticated user', response: arrayOf(ref('Role')) }] },
  { method: 'post', path: '/Role', operations: [
    { select: 'add', summary: 'Add a role.', entitlement: 'UserRolesModify', body: 'json', bodyKeys: ['name', 'entitlements', 'maxLeaseMinutes'], response: result },
    { select: 'update', summary: 'Change a role.', entitlement: 'UserRolesModify', params: roleRef,
      body: 'json', bodyKeys: ['name', 'entitlements', 'maxLeaseMinutes'], response: result },
    { select: 'delete', summary: 'Delete a role.', entitlement: 'UserRolesModify', params: roleRef, response: result },
  ] },
  { method: 'get', path: '/Settings', operations: [{
    select: '', summary: 'System-area settings (extension).', entitlement: 'SystemManageSettings',
    response: resultOf({ type: 'object', properties: { resetUninstallAll: { type: 'boolean' }, resetReboot: { type: 'boolean' },
      dataPortState: { type: 'string', enum: ['Data', 'Sync'],
        description: 'How GET /Gateway writes a data-mode port\'s state; default DEVICELAB_DATA_PORT_STATE (Data).' },
      licensedDeviceLimit: { type: 'integer', description: 'DEVICELAB_LICENSED_DEVICES; omitted when unlimited.' },
      retainIdleMinutes: { type: 'integer', description: 'A retain unused this long is released (a warning comes first); 0: never. Default 30.' },
      retainIdleMaxMinutes: { type: 'integer', description: 'The longest idle time a retain may ask for with idleMinutes; 0: any. Default 240.' },
      leaseMaxMinutes: { type: 'integer', description: 'The longest a lease lasts before it must be renewed (roles may set their own); 0: no maximum.' },
    } }) }] },
  { method: 'post', path: '/Settings', operations: [{
    select: 'update', summary: 'Change system-area settings (extension).', entitlement: 'SystemManageSettings', body: 'json',
    bodyKeys: ['resetUninstallAll', 'resetReboot', 'dataPortState', 'retainIdleMinutes', 'retainIdleMaxMinutes', 'leaseMaxMinutes'], response: result }] },
  { method: 'get', path: '/Webhook', operations: [{
    select: '', summary: 'Webhook endpoints (extension); secrets are never returned.', entitlement: 'SystemManageSettings',
    response: resultOf(arrayOf(ref('Webhook'))) }] },
  { method: 'post', path: '/Webhook', operations: [
    { select: 'add', summary: 'Register an endpoint: every Event (of eventTypes; all when empty) is POSTed to url as JSON, '
      + 'signed X-DeviceLab-Signature: sha256=<hex HMAC-SHA256 of the body keyed by secret>.', entitlement: 'SystemManageSettings',
    body: 'json', bodyKeys: ['url', 'eventTypes', 'secret'], response: resultOf(ref('Webhook')) },
    { select: 'delete', summary: 'Remove an endpoint and its delivery log (also as action=delete).', entitlement: 'SystemManageSettings',
      params: [required(p('id', 'guid'))], response: result },
  ] },
  { method: 'get', path: '/Session', operations: [{
    select: '', summary: 'Who is signed in (dashboard session cookie or Basic auth) and their entitlements (extension).',
    entitlement: 'none', response: resultOf({ type: 'object' }) }] },
  { method: 'post', path: '/Session', operations: [{
    select: '', summary: 'Dashboard sign-in (extension): sets an HTTP-only session cookie for 12 hours, ended sooner by a new '
      + 'token, deactivation or lost entitlements. No authentication; failures are HTTP 401 and throttled like Basic auth (429).',
    entitlement: 'none', params: [required(p('login', 'string')), required(p('token', 'string', 'The user\'s API token.'))],
    response: resultOf({ type: 'object' }) }] },
  { method: 'delete', path: '/Session', operations: [{
    select: '', summary: 'Sign out (extension): ends the session of the cookie sent, if any, and clears the cookie.',
    entitlement: 'none', response: result }] },
  { method: 'get', path: '/Webhook/Delivery', operations: [{
    select: '', summary: 'The newest 200 deliveries of one endpoint, newest first.', entitlement: 'SystemManageSettings',
    params: [required(p('id', 'guid', 'The webhook Guid.'))], response: resultOf(arrayOf(ref('WebhookDelivery'))) }] },
  { method: 'get', path: '/Reservation', operations: [{
    select: '', summary: 'Device bookings (extension) not ended by `from` (default now), every user\'s, by start time; at most 1000.',
    entitlement: 'DeviceList', params: [p('deviceId', 'deviceId', 'Only this device\'s bookings.'),
      p('from', 'date', 'Bookings that end after this (default: now).'), p('to', 'date', 'Bookings that start before this.')],
    response: resultOf(arrayOf(ref('Reservation'))) }] },
  { method: 'post', path: '/Reservation', operations: [
    { select: 'add', summary: 'Book a device for the caller from start to end (at most 7 days, starting within 90 days; '
      + 'at most 100 open bookings per user). A booking that overlaps another of the device is refused. `weeks` (1 to 12) '
      + 'books the same time every week that many times, all or none (one overlapping occurrence refuses the series); '
      + 'the answer is the first occurrence, its `seriesId` shared by the others.',
    entitlement: 'DeviceConnect', body: 'json', bodyKeys: ['deviceId', 'start', 'end', 'note', 'weeks'], response: resultOf(ref('Reservation')) },
    { select: 'action=update', summary: 'Move a booking or change its note (another user\'s needs DeviceReleaseAny).',
      entitlement: 'DeviceConnect', params: [required(p('id', 'guid', 'The reservation Guid.'))], body: 'json',
      bodyKeys: ['start', 'end', 'note'], response: resultOf(ref('Reservation')) },
    { select: 'action=delete', summary: 'Cancel a booking (another user\'s needs DeviceReleaseAny).',
      entitlement: 'DeviceConnect', params: [required(p('id', 'guid', 'The reservation Guid.')),
        p('series', 'bool', 'Also cancel the later occurrences of its weekly series.')], response: result },
  ] },
  { method: 'get', path: '/Device/Share', operations: [{
    select: '', summary: 'The view-only shares of the caller\'s current retain of a device (extension), with the live screen\'s '
      + 'current viewers (who, from where, view only or not, through which share).', entitlement: 'the device\'s retainer',
    params: [deviceId()], response: resultOf({ type: 'object', properties: {
      shares: arrayOf(ref('ScreenShare')), viewers: arrayOf(ref('ScreenViewer')) } }) }] },
  { method: 'post', path: '/Device/Share', operations: [{
    select: '', summary: 'Share the live screen of a device the caller retains, view only (extension): for `user` (a login), or '
      + 'as a link whose `token` (shown once) opens `/Device/Screen?id=<device>&share=<token>` for any signed-in user. A '
      + 'share lasts until revoked or the retain ends; at most 50 per retain.', entitlement: 'the device\'s retainer',
    params: [deviceId(), p('user', 'string', 'Share with this user (login) instead of making a link.')],
    response: resultOf(ref('ScreenShare')) }] },
  { method: 'delete', path: '/Device/Share', operations: [{
    select: '', summary: 'Revoke a view-only share (extension); its viewers are disconnected at once.', entitlement: 'the device\'s retainer',
    params: [deviceId(), required(p('shareId', 'guid', 'The share\'s id.'))], response: result }] },
  { method: 'get', path: '/Device/Screenshot', operations: [{
    select: '', summary: 'A still image of the device\'s screen (extension; `image/jpeg`, or `image/png` from iOS screenshots), '
      + 'at most a few seconds old: for whoever may watch the screen, and for anyone with DeviceList when nobody retains '
      + 'the device. Failures are a failure Result.', entitlement: 'DeviceList',
    params: [deviceId(), p('t', 'string', undefined, { ignored: 'a value a client changes to ask for a newer still by URL (browser caches)' })],
    response: { type: 'string', contentMediaType: 'image/jpeg' } }] },
  { method: 'get', path: '/openapi.json', operations: [{
    select: '', summary: 'This document (OpenAPI 3.1).', entitlement: 'any authenticated user', response: { type: 'object' } }] },
];

/**
 * The parameter keys each route knows, keyed as `rejectUnknownParameters` looks them up (`GET /device`): every
 * operation's parameters and their aliases, its verb keys, and on a POST `action` and the legacy `verb=` form.
 * The description above is the one list; the routes read the same names.
 */
export function knownParameters(): Map<string, RouteParameters> {
  const routes = new Map<string, RouteParameters>();
  for (const endpoint of ENDPOINTS) {
    // Every POST reads `action` and the legacy `verb` to pick its operation (an unknown one is refused by name).
    const keys = new Set<string>(endpoint.method === 'post' ? ['action', 'verb'] : []);
    for (const op of endpoint.operations) {
      if (op.select && !op.select.startsWith('action=')) keys.add(op.select);
      for (const param of op.params ?? []) {
        for (const name of [param.name, ...(param.aliases ?? [])]) keys.add(name.toLowerCase());
      }
    }
    const route = `${endpoint.method.toUpperCase()} ${endpoint.path}`;
    routes.set(`${endpoint.method.toUpperCase()} ${endpoint.path.toLowerCase()}`, { route, keys });
  }
  return routes;
}
