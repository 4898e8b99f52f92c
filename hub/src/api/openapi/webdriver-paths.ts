/**
 * The WebDriver endpoint in the OpenAPI document: outside /apiv1 (a path-level server `/`; `/wd/hub` serves the same),
 * answering in WebDriver's shapes (W3C errors `{"value":{"error","message","stacktrace"}}`), not the Result.
 */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Outside /apiv1: the same paths answer under `/wd/hub` too. */
const SERVERS = [{ url: '/', description: 'The hub itself; every /Appium path is also served under /wd/hub.' }];
const w3cError = { type: 'object', properties: { value: { type: 'object', properties: {
  error: { type: 'string' }, message: { type: 'string' }, stacktrace: { type: 'string' } } } } };
const errorAnswer = (description: string) => ({ description, content: { 'application/json': { schema: w3cError } } });
const sessionId = { name: 'sessionId', in: 'path', required: true, schema: { type: 'string' }, description: 'The id Appium returned, unchanged.' };

export const WEBDRIVER_PATHS: Record<string, Json> = {
  '/Appium/session': {
    servers: SERVERS,
    post: {
      operationId: 'post_WebDriver_session',
      summary: 'Create a WebDriver (Appium) session on a device of the lab (extension).',
      description: 'W3C `capabilities` (alwaysMatch + firstMatch) or legacy `desiredCapabilities`; names in any letter '
        + 'case, with or without `appium:`. The lab reads platformName, platformVersion (exact or prefix), deviceName '
        + '(name or model), udid / deviceConnectDevice (Guid, serial or vendor id), deviceConnectUserName + '
        + 'deviceConnectApiKey (instead of Basic auth), deviceConnectSkipInstall, newCommandTimeout (s, default 60, 0 = '
        + 'never), devicelab:queueTimeout (s, default 300, at most 900), devicelab:filter (as `devicelab --filter`), '
        + 'devicelab:formFactor, devicelab:app or app (a library application by Guid, name or package, installed first). '
        + 'Without a free matching device the request waits its turn in the lab\'s first-come line. The device is '
        + 'retained for the caller (entitlement DeviceConnect; DeviceApplicationManagement with an app). The body is at '
        + 'most 256 KiB, 32 levels deep and 1000 members; anything else is `invalid argument` and changes nothing.',
      security: [{ basic: [] }, {}],
      requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
      responses: {
        200: { description: 'Appium\'s answer, as it sent it: `{"value":{"sessionId","capabilities"}}`. Header X-Request-Id: the id the device\'s Appium log ties the creation to.' },
        400: errorAnswer('invalid argument: the body is not JSON, too large or deep, or a capability is of the wrong kind.'),
        401: errorAnswer('No credentials, or wrong ones (WWW-Authenticate: Basic).'),
        429: errorAnswer('Too many failed logins from this client (Retry-After).'),
        500: errorAnswer('session not created: no device matches, all matching ones stayed busy for the queue timeout (the message says which), a missing entitlement, or Appium\'s own refusal.'),
      },
    },
  },
  '/Appium/session/{sessionId}': {
    servers: SERVERS,
    delete: {
      operationId: 'delete_WebDriver_session',
      summary: 'Delete the session: relayed to the device\'s Appium server; the device is released once it has answered.',
      security: [{ basic: [] }, {}],
      parameters: [sessionId],
      responses: { 200: { description: 'Appium\'s answer.' }, 404: errorAnswer('invalid session id: unknown, or ended (the message says why).') },
    },
  },
  '/Appium/session/{sessionId}/{command}': {
    servers: SERVERS,
    description: 'Every other command of a session, any method, relayed verbatim (headers without hop-by-hop ones and '
      + 'credentials, body streamed both ways) to the device\'s Appium server. Credentials are optional (the session id '
      + 'stands for its creator); given, they must be the session user\'s or an administrator\'s (DeviceReleaseAny).',
    get: {
      operationId: 'get_WebDriver_command', summary: 'A relayed WebDriver command.', security: [{ basic: [] }, {}],
      parameters: [sessionId, { name: 'command', in: 'path', required: true, schema: { type: 'string' }, description: 'The rest of the WebDriver path (e.g. `source`, `screenshot`, `element/{id}/click`).' }],
      responses: {
        200: { description: 'Appium\'s answer, streamed.' },
        403: errorAnswer('The credentials given are another user\'s.'),
        404: errorAnswer('invalid session id: unknown, or ended (idle past newCommandTimeout, device released by an administrator, unplugged, or its gateway gone).'),
        502: errorAnswer('The device\'s Appium server could not be reached.'),
      },
    },
  },
  '/Appium/queue': {
    servers: SERVERS,
    get: {
      operationId: 'get_WebDriver_queue',
      summary: 'Who waits for a device (extension), in order: the waiting line shared by sessions and retains with a wait, purpose marked.',
      description: 'Entitlement DeviceReleaseAny (administrators).',
      responses: { 200: { description: '`{"value":[...]}`' }, 401: errorAnswer('No or wrong credentials.'), 403: errorAnswer('Not an administrator.') },
    },
  },
};

/** The WebDriver routes as the router mounts them (`/session/:sessionId`), for the drift test. */
export function describedWebDriverPaths(): string[] {
  return Object.keys(WEBDRIVER_PATHS).map((path) => path.replace(/^\/Appium/, '').replace(/\{command\}/, '*rest').replace(/\{(\w+)\}/g, ':$1'));
}
