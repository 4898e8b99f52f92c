/** Generates the OpenAPI 3.1 document from the in-code description (`endpoints.ts`, `schemas.ts`). */
import { ENDPOINTS, type OperationDescription, type ParamDescription } from './endpoints';
import { WEBDRIVER_PATHS } from './webdriver-paths';
import { SCHEMAS, ref } from './schemas';

type Json = Record<string, unknown>;

function paramSchema(param: ParamDescription): Json {
  switch (param.type) {
    case 'guid': return { type: 'string', format: 'uuid' };
    case 'bool': return { type: 'string', enum: ['true', 'false'], description: 'any letter case' };
    case 'int': return { type: 'integer', format: 'int32' };
    case 'date': return { type: 'string', description: 'ISO 8601, yyyy-MM-dd, yyyy/MM/dd [H:mm:ss] or M/d/yyyy h:mm:ss tt' };
    case 'enum': return { type: 'string', enum: param.values ?? [], description: 'any letter case' };
    default: return { type: 'string' };
  }
}

/** Operations of one method + path merged: a POST's operations are selected by `action=` or a verb key. */
function operationObject(method: string, path: string, operations: OperationDescription[]): Json {
  const params = new Map<string, Json>();
  const actions = operations.filter((op) => op.select.startsWith('action=')).map((op) => op.select.slice(7));
  if (actions.length > 0) {
    params.set('action', { name: 'action', in: 'query', required: false, schema: { type: 'string', enum: actions },
      description: 'Case-insensitive. May also travel in an urlencoded body.' });
  }
  for (const verb of operations.filter((op) => op.select && !op.select.includes('=')).map((op) => op.select)) {
    params.set(verb, { name: verb, in: 'query', required: false, allowEmptyValue: true, schema: { type: 'string' },
      description: `Verb key: present (\`?${verb}\`, \`${verb}=\`) selects "${verb}".` });
  }
  for (const op of operations) {
    for (const param of op.params ?? []) {
      if (params.has(param.name)) continue;
      params.set(param.name, {
        name: param.name, in: 'query', required: operations.length === 1 && param.required === true,
        schema: paramSchema(param), ...(param.description || param.ignored
          ? { description: param.ignored ? `Accepted and ignored: ${param.ignored}` : param.description } : {}),
      });
      for (const alias of param.aliases ?? []) {
        params.set(alias, { name: alias, in: 'query', required: false, schema: paramSchema(param),
          description: `Another name of ${param.name}.` });
      }
    }
  }
  if (operations.some((op) => op.async)) {
    params.set('wait', { name: 'wait', in: 'query', required: false, schema: { type: 'string', enum: ['true', 'false'] },
      description: 'true blocks until the operation completes and returns its result (debugging only).' });
  }
  params.set('pretty', { name: 'pretty', in: 'query', required: false, schema: { type: 'string', enum: ['true', 'false'] } });

  const describe = (op: OperationDescription) =>
    `- ${op.select ? `\`${op.select}\`: ` : ''}${op.summary} Entitlement: ${op.entitlement}.`
    + `${op.params?.length ? ` Parameters: ${op.params.map((x) => `${x.name}${x.required ? ' (required)' : ''}`).join(', ')}.` : ''}`
    + `${op.bodyKeys ? ` JSON body keys (case-insensitive): ${op.bodyKeys.join(', ')}.` : ''}`
    + `${op.async ? ' Replies {"isSuccess":true,"data":{"asyncResponseId":…}}; poll GET /Async.' : ''}`;
  const responses = operations.map((op) => (op.async
    ? { oneOf: [{ type: 'object', properties: { isSuccess: { const: true }, data: ref('AsyncResponse') } }, op.response] }
    : op.response));
  const jsonBody = operations.some((op) => op.body === 'json');
  const multipart = operations.some((op) => op.body === 'multipart');
  const content: Json = {};
  if (method === 'post') {
    content['application/x-www-form-urlencoded'] = { schema: { type: 'object', additionalProperties: { type: 'string' },
      description: 'Any query parameter may travel here instead (the C# client sends all of them in the body).' } };
  }
  if (jsonBody) content['application/json'] = { schema: { type: 'object', additionalProperties: true } };
  if (multipart) content['multipart/form-data'] = { schema: { type: 'object', additionalProperties: { type: 'string', format: 'binary' } } };
  return {
    operationId: `${method}${path.replace(/[^A-Za-z0-9]+/g, '_')}`,
    summary: operations.length === 1 ? operations[0].summary : `${operations.length} operations`,
    description: operations.map(describe).join('\n'),
    parameters: [...params.values()],
    ...(method === 'post' ? { requestBody: { required: false, content } } : {}),
    responses: {
      200: { description: 'Result (business failures are HTTP 200 with isSuccess false).',
        content: { 'application/json': { schema: responses.length === 1 ? responses[0] : { oneOf: responses } } } },
      401: { description: 'Missing or wrong credentials (WWW-Authenticate: Basic).' },
    },
  };
}

/**
 * The WebSocket endpoints (served on the HTTP server's upgrades by `http/websocket-upgrade.ts`, not by the express
 * routes): described as GETs with an `x-devicelab-websocket` extension, since OpenAPI has no WebSocket operations.
 */
const WEBSOCKET_PATHS: Record<string, Json> = {
  '/Device/Connect': {
    get: {
      operationId: 'get_Device_Connect',
      summary: 'Relayed device connection (extension): a WebSocket carrying one raw TCP byte stream into the device\'s '
        + 'access endpoint on its gateway.',
      description: 'Upgrade with `Connection: Upgrade`, `Upgrade: websocket`. Binary messages both ways are the bytes of '
        + 'one connection into the device\'s adb endpoint (Android: the client speaks the adb transport protocol, its '
        + 'adb key is checked at AUTH as on the gateway\'s port) or, for iOS, into a usbmuxd that lists only this device; '
        + 'text messages are ignored; closing either end closes the other; a release, disable, delete or USB port Off '
        + 'ends it. The 101 answer names what it carries in `DeviceLab-Endpoint: adb|usbmux`. Authenticated by Basic '
        + 'credentials of the user who retains the device (entitlement DeviceConnect) or `Authorization: Bearer '
        + '<authenticator>` of the current retain\'s DeviceAccessTicket. `devicelab connect <device>` is its client.',
      security: [{ basic: [] }, { deviceTicket: [] }],
      parameters: [
        { name: 'id', in: 'query', required: true, schema: { type: 'string' }, description: 'The device Guid, serial number or vendor unique identifier.' },
        { name: 'deviceId', in: 'query', required: false, schema: { type: 'string' }, description: 'Another name of id.' },
      ],
      'x-devicelab-websocket': { subprotocol: null, messages: 'binary', endpointHeader: 'DeviceLab-Endpoint' },
      responses: {
        101: { description: 'Switching Protocols: the WebSocket is open and joined to the device.',
          headers: { 'DeviceLab-Endpoint': { schema: { type: 'string', enum: ['adb', 'usbmux'] } } } },
        400: { description: 'No id.', content: { 'application/json': { schema: ref('ResultModel') } } },
        401: { description: 'Missing or wrong credentials (WWW-Authenticate: Basic).' },
        403: { description: 'Not retained by the caller, the ticket is not the current retain\'s, or the device is disabled or deleted.',
          content: { 'application/json': { schema: ref('ResultModel') } } },
        503: { description: 'The device\'s gateway is not connected or did not open the tunnel in time.',
          content: { 'application/json': { schema: ref('ResultModel') } } },
      },
    },
  },
};

WEBSOCKET_PATHS['/Device/Screen'] = {
  get: {
    operationId: 'get_Device_Screen',
    summary: 'Live screen of a device (extension): a WebSocket carrying its frames and, for the retainer, touch, keys and text.',
    description: 'Upgrade with `Connection: Upgrade`, `Upgrade: websocket`. Every message is binary: one kind byte, then '
      + 'its payload. Kind 1: a UTF-8 JSON object; kind 2: one image (JPEG; PNG for iOS screenshots). From the hub: '
      + '`{"t":"start","width","height","rotation","controls":{"touch","keys","text","rotate"},"keys","viewOnly","source","note"}` '
      + '(`keys`: the hardware keys the source takes when it takes only some, e.g. an iPhone through WebDriverAgent; `source`: '
      + '`minicap`, `minicap-apk`, `wda-mjpeg`, `screenshotr`; `note`: what the viewer cannot do there and why) '
      + 'when the capture runs and again after a rotation; frames; `{"t":"pong"}`; `{"t":"error","message"}` before the '
      + 'hub closes it. To the hub: `{"t":"touch","a":"d|m|u","x":0..1,"y":0..1,"c":0..9}` (x, y across the image as '
      + 'shown), `{"t":"key","key":"home|back|app_switch|volume_up|volume_down|power|enter|delete|menu"}`, '
      + '`{"t":"text","text":"..."}` (any Unicode, up to 1000 characters), `{"t":"rotate","rotation":0|90|180|270}`, '
      + '`{"t":"ping","id"}`. The retainer controls; a view-only viewer (a share, or DeviceReleaseAny) only watches: its '
      + 'input is dropped by the hub and by the gateway. A slow viewer gets the newest frame, never a backlog. A release, '
      + 'disable, new retainer or revoked share ends it within a second. Authenticated by Basic credentials or the '
      + 'dashboard\'s session cookie (same origin only). A view-only viewer who joins is a SharedViewOnlySessionCreated event.',
    security: [{ basic: [] }],
    parameters: [
      { name: 'id', in: 'query', required: true, schema: { type: 'string' }, description: 'The device Guid, serial number or vendor unique identifier.' },
      { name: 'deviceId', in: 'query', required: false, schema: { type: 'string' }, description: 'Another name of id.' },
      { name: 'viewOnly', in: 'query', required: false, schema: { type: 'boolean' }, description: 'The retainer watches without controlling.' },
      { name: 'share', in: 'query', required: false, schema: { type: 'string' }, description: 'A view-only share link\'s token.' },
    ],
    'x-devicelab-websocket': { subprotocol: null, messages: 'binary' },
    responses: {
      101: { description: 'Switching Protocols: the WebSocket is open and joined to the device\'s screen.' },
      400: { description: 'No id, or a malformed viewOnly or share.', content: { 'application/json': { schema: ref('ResultModel') } } },
      401: { description: 'Missing or wrong credentials.' },
      403: { description: 'Neither the retainer nor a share holder nor DeviceReleaseAny; the device is disabled or deleted; '
        + 'or a cookie from another origin.', content: { 'application/json': { schema: ref('ResultModel') } } },
      503: { description: 'The device\'s gateway is not connected or did not open the screen in time.',
        content: { 'application/json': { schema: ref('ResultModel') } } },
    },
  },
};

export function buildOpenApiDocument(version = '1'): Json {
  const paths: Record<string, Json> = {};
  for (const endpoint of ENDPOINTS) {
    paths[endpoint.path] ??= {};
    paths[endpoint.path][endpoint.method] = operationObject(endpoint.method, endpoint.path, endpoint.operations);
  }
  for (const [path, methods] of Object.entries(WEBSOCKET_PATHS)) paths[path] = { ...paths[path], ...methods };
  for (const [path, item] of Object.entries(WEBDRIVER_PATHS)) paths[path] = item;
  return {
    openapi: '3.1.0',
    info: { title: 'DeviceLab API', version, description:
      'Device lab management API (apiv1). Parameters are read from the query string and an urlencoded body, '
      + 'names case-insensitive, empty values meaning omitted. A parameter with a value that its operation does not '
      + 'list (besides get, pretty and wait) is a failure Result naming it.' },
    servers: [{ url: '/apiv1' }],
    security: [{ basic: [] }],
    paths,
    components: { schemas: SCHEMAS, securitySchemes: {
      basic: { type: 'http', scheme: 'basic', description: '<login>:<API token>' },
      deviceTicket: { type: 'http', scheme: 'bearer', description: 'A DeviceAccessTicket authenticator (/Device/Connect only).' },
    } },
  };
}

/** Every described express route as `METHOD /path` (for the drift test). */
export function describedRoutes(): string[] {
  return ENDPOINTS.map((e) => `${e.method.toUpperCase()} ${e.path}`);
}

/** The described WebSocket paths, e.g. `/Device/Connect`. */
export function describedWebSocketPaths(): string[] {
  return Object.keys(WEBSOCKET_PATHS);
}
