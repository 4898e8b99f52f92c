/**
 * WebDriverAgent's routes (WebDriverAgentLib/Commands) that Appium's XCUITest driver and the gateway's live screen
 * use, answered from the simulated screen. A route is session-less only where WDA's is (`.withoutSession`).
 */
import type { Route, RouteHandler } from '../../util/json-wire';
import { W3cError, elementRef, invalidArgument, invalidSession, noSuchElement } from '../../util/json-wire';
import { performActions } from '../../util/w3c-actions';
import type { XctestScreen } from './xctest-screen';
import { WdaSession, resetSessionSettings } from './wda-session';
import { WdaTreeNode, attributesOf, findWdaNodes, isVisible, wdaSourceJson, wdaSourceXml } from './wda-tree';

export interface WdaState {
  screen: XctestScreen;
  session: WdaSession | null;
  settings: Record<string, unknown>;
  status(): Record<string, unknown>;
  deviceInfo(): Record<string, unknown>;
}

const center = (t: WdaTreeNode): [number, number] => [t.node.rect[0] + t.node.rect[2] / 2, t.node.rect[1] + t.node.rect[3] / 2];

export function wdaRoutes(state: WdaState): Route[] {
  const { screen } = state;
  const session = (id: string | undefined): WdaSession => {
    if (!state.session || (id !== undefined && state.session.id !== id)) throw invalidSession(id ?? '');
    return state.session;
  };
  const current = (p: Record<string, string>) => session(p.sessionId);
  const element = (p: Record<string, string>): WdaTreeNode => current(p).resolve(p.uuid);
  const routes: Route[] = [];
  /** A route WDA serves with and without the session prefix. */
  const both = (method: string, path: string, handler: RouteHandler) => {
    routes.push([method, `/session/:sessionId${path}`, handler], [method, path, handler]);
  };
  const inSession = (method: string, path: string, handler: RouteHandler) => routes.push([method, `/session/:sessionId${path}`, handler]);
  const bundleOf = (body: Record<string, unknown>): string => {
    if (typeof body.bundleId !== 'string' || !body.bundleId) throw invalidArgument("'bundleId' is required");
    return body.bundleId;
  };
  const find = (p: Record<string, string>, body: Record<string, unknown>, context?: string): WdaTreeNode[] => {
    const s = current(p);
    if (typeof body.using !== 'string' || typeof body.value !== 'string') throw invalidArgument("'using' and 'value' must be strings");
    const snap = s.snapshot();
    return findWdaNodes(snap, body.using, body.value, context ? s.resolve(context, snap) : undefined);
  };
  const typeText = (body: Record<string, unknown>) => {
    const value = Array.isArray(body.value) ? body.value.join('') : typeof body.text === 'string' ? body.text : '';
    screen.type(value);
  };
  const rect = (t: WdaTreeNode) => ({ x: t.node.rect[0], y: t.node.rect[1], width: t.node.rect[2], height: t.node.rect[3] });

  routes.push(['GET', '/status', () => state.status()]);
  routes.push(['GET', '/health', () => 'I-AM-ALIVE']);
  routes.push(['GET', '/wda/healthcheck', () => null]);
  routes.push(['POST', '/session', ({ body }) => {
    if (!body.capabilities || typeof body.capabilities !== 'object' || Array.isArray(body.capabilities)) {
      throw new W3cError('session not created', "'capabilities' is mandatory to create a new session", 500);
    }
    const caps = (body.capabilities as { alwaysMatch?: Record<string, unknown>; firstMatch?: Array<Record<string, unknown>> }) ?? {};
    const merged = { ...(caps.alwaysMatch ?? {}), ...(caps.firstMatch?.[0] ?? {}), ...((body.desiredCapabilities as Record<string, unknown>) ?? {}) };
    const bundleId = typeof merged.bundleId === 'string' ? merged.bundleId : undefined;
    if (bundleId && !screen.launch(bundleId)) throw new W3cError('session not created', `Application '${bundleId}' is not installed on the device`, 500);
    resetSessionSettings(state.settings);
    state.session = new WdaSession(merged, screen, state.settings);
    const active = screen.activeBundle();
    return { sessionId: state.session.id, capabilities: { device: screen.width >= 700 ? 'ipad' : 'iphone', browserName: screen.displayName(active), sdkVersion: state.deviceInfo().osVersion, CFBundleIdentifier: active } };
  }]);
  inSession('GET', '', ({ params }) => {
    const s = current(params);
    return { sessionId: s.id, capabilities: { device: 'iphone', browserName: screen.displayName(screen.activeBundle()), CFBundleIdentifier: screen.activeBundle() } };
  });
  inSession('DELETE', '', ({ params }) => {
    current(params);
    state.session = null;
    return null;
  });
  inSession('POST', '/element', ({ params, body }) => {
    const found = find(params, body);
    if (!found.length) throw noSuchElement(`unable to find an element using '${String(body.using)}', value '${String(body.value)}'`);
    return elementRef(current(params).remember(found[0]));
  });
  inSession('POST', '/elements', ({ params, body }) => find(params, body).map((t) => elementRef(current(params).remember(t))));
  inSession('POST', '/element/:uuid/element', ({ params, body }) => {
    const found = find(params, body, params.uuid);
    if (!found.length) throw noSuchElement(`unable to find an element using '${String(body.using)}', value '${String(body.value)}'`);
    return elementRef(current(params).remember(found[0]));
  });
  inSession('POST', '/element/:uuid/elements', ({ params, body }) => find(params, body, params.uuid).map((t) => elementRef(current(params).remember(t))));
  inSession('GET', '/element/active', () => {
    throw noSuchElement('No element is focused');
  });
  inSession('POST', '/element/:uuid/click', ({ params }) => {
    const [x, y] = center(element(params));
    screen.tap(x, y);
    return null;
  });
  inSession('GET', '/element/:uuid/text', ({ params }) => {
    const n = element(params).node;
    return n.value || n.label || '';
  });
  inSession('GET', '/element/:uuid/name', ({ params }) => element(params).node.type);
  inSession('GET', '/element/:uuid/rect', ({ params }) => rect(element(params)));
  inSession('GET', '/element/:uuid/displayed', ({ params }) => isVisible(element(params).node, screen.width, screen.height));
  inSession('GET', '/element/:uuid/enabled', ({ params }) => element(params).node.enabled);
  inSession('GET', '/element/:uuid/selected', ({ params }) => (element(params), false));
  inSession('GET', '/element/:uuid/attribute/:name', ({ params }) => {
    const t = element(params);
    if (params.name === 'rect') return rect(t);
    const attrs = attributesOf(t.node, t.path[t.path.length - 1] ?? 0, screen.width, screen.height);
    const key = params.name === 'wdName' ? 'name' : params.name === 'wdLabel' ? 'label' : params.name === 'wdValue' ? 'value' : params.name === 'wdType' ? 'type' : params.name;
    if (key in attrs) return ['enabled', 'visible', 'accessible'].includes(key) ? (attrs[key] === 'true' ? 'true' : 'false') : attrs[key];
    return null;
  });
  inSession('POST', '/element/:uuid/value', ({ params, body }) => {
    const [x, y] = center(element(params));
    screen.tap(x, y);
    typeText(body);
    return null;
  });
  inSession('POST', '/element/:uuid/clear', ({ params }) => {
    element(params);
    screen.clearText();
    return null;
  });
  inSession('GET', '/element/:uuid/screenshot', ({ params }) => (element(params), screen.png().toString('base64')));
  both('GET', '/source', ({ query }) => {
    const tree = screen.tree();
    const format = query.get('format') ?? 'xml';
    if (format === 'json') return wdaSourceJson(tree, screen.width, screen.height);
    return wdaSourceXml(state.session ? state.session.snapshot() : new WdaSession({}, screen).snapshot());
  });
  both('GET', '/screenshot', () => screen.png().toString('base64'));
  both('GET', '/window/size', () => ({ width: screen.width, height: screen.height }));
  inSession('GET', '/window/rect', () => ({ x: 0, y: 0, width: screen.width, height: screen.height }));
  both('GET', '/wda/screen', () => ({ statusBarSize: { width: screen.width, height: screen.statusBarHeight }, scale: screen.scale, screenSize: { width: screen.width, height: screen.height } }));
  both('GET', '/orientation', () => 'PORTRAIT');
  both('POST', '/orientation', ({ body }) => {
    if (String(body.orientation).toUpperCase() !== 'PORTRAIT') throw new W3cError('unsupported operation', `Unable To Rotate Device`, 500);
    return null;
  });
  both('GET', '/rotation', () => ({ x: 0, y: 0, z: 0 }));
  inSession('GET', '/appium/settings', ({ params }) => current(params).settings);
  inSession('POST', '/appium/settings', ({ params, body }) => {
    const s = current(params);
    if (!body.settings || typeof body.settings !== 'object') throw invalidArgument("'settings' must be an object");
    Object.assign(s.settings, body.settings);
    return s.settings;
  });
  both('POST', '/wda/homescreen', () => (screen.home(), null));
  inSession('POST', '/wda/pressButton', ({ body }) => {
    if (body.name === 'home') screen.home();
    else if (body.name !== 'volumeUp' && body.name !== 'volumeDown') throw invalidArgument(`The button '${String(body.name)}' is unknown. Only the following button names are supported: home, volumeUp, volumeDown`);
    return null;
  });
  inSession('POST', '/wda/apps/launch', ({ body }) => {
    const bundleId = bundleOf(body);
    if (!screen.launch(bundleId)) throw new W3cError('unknown error', `Failed to launch ${bundleId} application`, 500);
    return null;
  });
  inSession('POST', '/wda/apps/activate', ({ body }) => {
    const bundleId = bundleOf(body);
    if (!screen.launch(bundleId)) throw new W3cError('unknown error', `Failed to activate ${bundleId} application`, 500);
    return null;
  });
  inSession('POST', '/wda/apps/terminate', ({ body }) => screen.terminate(bundleOf(body)));
  inSession('POST', '/wda/apps/state', ({ body }) => screen.state(bundleOf(body)));
  both('GET', '/wda/activeAppInfo', () => {
    const bundleId = screen.activeBundle();
    return { pid: bundleId === 'com.apple.springboard' ? 61 : 4000 + bundleId.length, bundleId, name: '', processArguments: { env: {}, args: [] } };
  });
  inSession('POST', '/wda/keys', ({ body }) => (typeText(body), null));
  inSession('POST', '/wda/tap', ({ body }) => {
    const x = Number(body.x), y = Number(body.y);
    if (!Number.isFinite(x) || !Number.isFinite(y)) throw invalidArgument("'x' and 'y' must be numbers");
    screen.tap(x, y);
    return null;
  });
  inSession('POST', '/wda/touchAndHold', ({ body }) => {
    const x = Number(body.x), y = Number(body.y);
    if (!Number.isFinite(x) || !Number.isFinite(y)) throw invalidArgument("'x' and 'y' must be numbers");
    screen.gesture([x, y], [x, y], Math.max(0, Number(body.duration) || 0) * 1000);
    return null;
  });
  inSession('POST', '/wda/dragfromtoforduration', ({ body }) => {
    const [fromX, fromY, toX, toY] = [body.fromX, body.fromY, body.toX, body.toY].map(Number);
    if (![fromX, fromY, toX, toY].every(Number.isFinite)) throw invalidArgument("'fromX', 'fromY', 'toX' and 'toY' must be numbers");
    screen.gesture([fromX, fromY], [toX, toY], Math.max(0, Number(body.duration) || 0) * 1000);
    return null;
  });
  both('GET', '/wda/locked', () => false);
  both('POST', '/wda/unlock', () => null);
  both('GET', '/wda/device/info', () => state.deviceInfo());
  inSession('GET', '/wda/batteryInfo', () => ({ level: 0.8, state: 2 }));
  inSession('POST', '/timeouts', () => null);
  inSession('GET', '/alert/text', () => {
    throw new W3cError('no such alert', 'An attempt was made to operate on a modal dialog when one was not open', 404);
  });
  inSession('POST', '/actions', async ({ params, body }) => {
    const s = current(params);
    const down = new Map<number, { at: [number, number]; since: number }>();
    await performActions(body, {
      touch: (contact, action, x, y) => {
        if (action === 'down') down.set(contact, { at: [x, y], since: Date.now() });
        if (action === 'up') {
          const start = down.get(contact);
          down.delete(contact);
          if (start) screen.gesture(start.at, [x, y], Date.now() - start.since);
        }
      },
      key: (v) => screen.type(v),
      elementCenter: (id) => center(s.resolve(id)),
    });
    return null;
  });
  return routes;
}
