/**
 * The UiAutomator2 server's routes (AppiumServlet), answered from the simulated screen.
 */
import type { Route } from '../../util/json-wire';
import { elementRef, invalidArgument, invalidSession, noSuchElement } from '../../util/json-wire';
import { performActions } from '../../util/w3c-actions';
import type { Uia2Host } from './server';
import { findNodes } from './finder';
import { Uia2Session, centerOf } from './session';
import { boundsText, nodeAttributes, sourceXml, type TreeNode } from './tree';

/** WebDriver key code points typed as Android keys (W3C Keys -> KeyEvent codes). */
const SPECIAL_KEYS: Record<string, number> = { '\uE003': 67, '\uE006': 66, '\uE007': 66, '\uE004': 61, '\uE00C': 111, '\uE017': 112, '\uE012': 21, '\uE013': 19, '\uE014': 22, '\uE015': 20 };

/** What the routes need of the server they run in. */
export interface Uia2State {
  host: Uia2Host;
  session: Uia2Session | null;
  newSession(caps: Record<string, unknown>): Uia2Session;
  deleteSession(): void;
}

export function uia2Routes(state: Uia2State): Route[] {
  const { host } = state;
  const screen = () => host.screen;
  const session = (id: string): Uia2Session => {
    if (!state.session || state.session.id !== id) throw invalidSession(id);
    return state.session;
  };
  const element = (p: Record<string, string>): TreeNode => session(p.sessionId).resolve(p.id);
  const typeKeys = (text: string) => {
    for (const ch of text) {
      const code = SPECIAL_KEYS[ch];
      if (code !== undefined) screen().pressKey(code);
      else if (ch < '\uE000' || ch > '\uF8FF') screen().typeText(ch);
    }
  };
  const find = (sessionId: string, body: Record<string, unknown>): TreeNode[] => {
    const s = session(sessionId);
    const strategy = body.strategy ?? body.using;
    const selector = body.selector ?? body.value;
    if (typeof strategy !== 'string' || typeof selector !== 'string') throw invalidArgument("'strategy' and 'selector' must be strings");
    const snap = s.snapshot();
    const context = typeof body.context === 'string' && body.context ? s.resolve(body.context, snap) : undefined;
    return findNodes(snap, strategy, selector, context, screen().foregroundPackage());
  };
  const rect = (n: TreeNode) => ({ x: n.ui.bounds[0], y: n.ui.bounds[1], width: n.ui.bounds[2] - n.ui.bounds[0], height: n.ui.bounds[3] - n.ui.bounds[1] });
  const attribute = (n: TreeNode, name: string): string | null => {
    const attrs = nodeAttributes(n.ui, n.path[n.path.length - 1] ?? 0, screen().displayWidth, screen().displayHeight);
    // Attribute.java's other names of the same attributes.
    const aliases: Record<string, string> = { contentDescription: 'content-desc', resourceId: 'resource-id', className: 'class', longClickable: 'long-clickable', name: 'text' };
    const key = aliases[name] ?? name;
    if (key in attrs) return attrs[key];
    if (name === 'selection-start' || name === 'selection-end') return null;
    throw invalidArgument(`'${name}' attribute is unknown for the element. Only the following attributes are supported: ${Object.keys(attrs).join(', ')}`);
  };
  const deviceInfo = () => {
    const p = host.props();
    const { spec } = host;
    return {
      androidId: host.androidId(), manufacturer: spec.manufacturer, model: spec.model, brand: spec.brand, apiVersion: String(spec.sdk),
      platformVersion: spec.androidVersion, carrierName: spec.operator?.name ?? '', realDisplaySize: `${spec.screen.width}x${spec.screen.height}`,
      displayDensity: spec.screen.density, networks: [{ type: 1, typeName: 'WIFI', subtype: 0, subtypeName: '', isConnected: true, detailedState: 'CONNECTED', state: 'CONNECTED', extraInfo: '"lab"', isAvailable: true, isRoaming: false, isFailover: false, capabilities: null }],
      locale: p['persist.sys.locale'] || 'en_US', timeZone: spec.timezone, bluetooth: { state: 'ON' },
    };
  };
  // The status bar is 24 dp high, as the screen lays it out.
  const statusBar = () => Math.round((24 * host.spec.screen.density) / 160);

  return [
    ['GET', '/status', () => ({ ready: true, message: 'UiAutomator2 Server is ready to accept commands', build: host.serverVersion() })],
    ['GET', '/sessions', () => (state.session ? [{ id: state.session.id, sessionId: state.session.id, capabilities: state.session.capabilities }] : [])],
    ['POST', '/session', ({ body }) => {
      const caps = (body.capabilities ?? {}) as { firstMatch?: Array<Record<string, unknown>>; alwaysMatch?: Record<string, unknown> };
      const merged = { ...(caps.alwaysMatch ?? {}), ...(caps.firstMatch?.[0] ?? {}), ...((body.desiredCapabilities as Record<string, unknown>) ?? {}) };
      const s = state.newSession(merged);
      return { sessionId: s.id, capabilities: s.capabilities };
    }],
    ['GET', '/session/:sessionId', ({ params }) => session(params.sessionId).capabilities],
    ['DELETE', '/session/:sessionId', ({ params }) => {
      session(params.sessionId);
      state.deleteSession();
      return null;
    }],
    ['POST', '/session/:sessionId/element', ({ params, body }) => {
      const found = find(params.sessionId, body);
      if (!found.length) throw noSuchElement();
      return elementRef(session(params.sessionId).remember(found[0]));
    }],
    ['POST', '/session/:sessionId/elements', ({ params, body }) => find(params.sessionId, body).map((n) => elementRef(session(params.sessionId).remember(n)))],
    ['POST', '/session/:sessionId/element/:id/element', ({ params, body }) => {
      const found = find(params.sessionId, { ...body, context: params.id });
      if (!found.length) throw noSuchElement();
      return elementRef(session(params.sessionId).remember(found[0]));
    }],
    ['POST', '/session/:sessionId/element/:id/elements', ({ params, body }) => find(params.sessionId, { ...body, context: params.id }).map((n) => elementRef(session(params.sessionId).remember(n)))],
    ['GET', '/session/:sessionId/element/active', ({ params }) => {
      const s = session(params.sessionId);
      const focused = s.snapshot().nodes.find((n) => n.ui.focused);
      if (!focused) throw noSuchElement('No element is focused');
      return elementRef(s.remember(focused));
    }],
    ['POST', '/session/:sessionId/element/:id/click', ({ params }) => {
      const [x, y] = centerOf(element(params).ui);
      screen().tap(x, y);
      return null;
    }],
    ['GET', '/session/:sessionId/element/:id/text', ({ params }) => element(params).ui.text],
    ['GET', '/session/:sessionId/element/:id/name', ({ params }) => element(params).ui.className],
    ['GET', '/session/:sessionId/element/:id/rect', ({ params }) => rect(element(params))],
    ['GET', '/session/:sessionId/element/:id/location', ({ params }) => { const r = rect(element(params)); return { x: r.x, y: r.y }; }],
    ['GET', '/session/:sessionId/element/:id/size', ({ params }) => { const r = rect(element(params)); return { width: r.width, height: r.height }; }],
    ['GET', '/session/:sessionId/element/:id/attribute/:name', ({ params }) => attribute(element(params), params.name)],
    ['GET', '/session/:sessionId/element/:id/displayed', ({ params }) => attribute(element(params), 'displayed') === 'true'],
    ['GET', '/session/:sessionId/element/:id/enabled', ({ params }) => (element(params), true)],
    ['GET', '/session/:sessionId/element/:id/selected', ({ params }) => (element(params), false)],
    ['GET', '/session/:sessionId/element/:id/screenshot', ({ params }) => (element(params), screen().png().toString('base64'))],
    ['POST', '/session/:sessionId/element/:id/value', ({ params, body }) => {
      const n = element(params);
      const text = typeof body.text === 'string' ? body.text : Array.isArray(body.value) ? body.value.join('') : '';
      const [x, y] = centerOf(n.ui);
      screen().tap(x, y);
      if (body.replace === true) for (let i = 0; i < n.ui.text.length; i++) screen().pressKey(67);
      typeKeys(text);
      return null;
    }],
    ['POST', '/session/:sessionId/element/:id/clear', ({ params }) => {
      const n = element(params);
      const [x, y] = centerOf(n.ui);
      screen().tap(x, y);
      for (let i = 0; i < n.ui.text.length; i++) screen().pressKey(67);
      return null;
    }],
    ['GET', '/session/:sessionId/source', ({ params }) => sourceXml(session(params.sessionId).snapshot())],
    ['GET', '/session/:sessionId/screenshot', ({ params }) => (session(params.sessionId), screen().png().toString('base64'))],
    ['GET', '/session/:sessionId/window/:handle/size', ({ params }) => (session(params.sessionId), { width: screen().displayWidth, height: screen().displayHeight })],
    ['GET', '/session/:sessionId/window/rect', ({ params }) => (session(params.sessionId), { x: 0, y: 0, width: screen().displayWidth, height: screen().displayHeight })],
    ['GET', '/session/:sessionId/appium/device/info', ({ params }) => (session(params.sessionId), deviceInfo())],
    ['GET', '/session/:sessionId/appium/device/pixel_ratio', ({ params }) => (session(params.sessionId), host.spec.screen.density / 160)],
    ['GET', '/session/:sessionId/appium/device/display_density', ({ params }) => (session(params.sessionId), host.spec.screen.density)],
    ['GET', '/session/:sessionId/appium/device/system_bars', ({ params }) => (session(params.sessionId), { statusBar: statusBar() })],
    ['POST', '/session/:sessionId/actions', async ({ params, body }) => {
      const s = session(params.sessionId);
      await performActions(body, {
        touch: (c, a, x, y) => screen().touch(c, a, x, y),
        key: (v) => typeKeys(v),
        elementCenter: (id) => centerOf(s.resolve(id).ui),
      });
      return null;
    }],
    ['POST', '/session/:sessionId/appium/gestures/click', ({ params, body }) => {
      const s = session(params.sessionId);
      const origin = body.origin as Record<string, string> | undefined;
      const id = origin?.ELEMENT ?? origin?.['element-6066-11e4-a52e-4f735466cecf'];
      const offset = body.offset as { x?: number; y?: number } | undefined;
      const [x, y] = id ? (offset ? [s.resolve(id).ui.bounds[0] + Number(offset.x ?? 0), s.resolve(id).ui.bounds[1] + Number(offset.y ?? 0)] : centerOf(s.resolve(id).ui)) : [Number(offset?.x), Number(offset?.y)];
      if (!Number.isFinite(x) || !Number.isFinite(y)) throw invalidArgument('A click gesture needs an element or an offset');
      screen().tap(x, y);
      return null;
    }],
    ['POST', '/session/:sessionId/keys', ({ params, body }) => {
      session(params.sessionId);
      const value = Array.isArray(body.value) ? body.value.join('') : typeof body.text === 'string' ? body.text : '';
      typeKeys(value);
      return null;
    }],
    ['POST', '/session/:sessionId/appium/device/press_keycode', ({ params, body }) => {
      session(params.sessionId);
      const code = Number(body.keycode);
      if (!Number.isInteger(code) || code < 0) throw invalidArgument("'keycode' must be a non-negative integer");
      screen().pressKey(code);
      return null;
    }],
    ['POST', '/session/:sessionId/appium/device/long_press_keycode', ({ params, body }) => {
      session(params.sessionId);
      screen().pressKey(Number(body.keycode));
      return null;
    }],
    ['POST', '/session/:sessionId/back', ({ params }) => (session(params.sessionId), screen().pressKey(4), null)],
    ['GET', '/session/:sessionId/orientation', ({ params }) => (session(params.sessionId), screen().rotation % 2 === 0 ? 'PORTRAIT' : 'LANDSCAPE')],
    ['POST', '/session/:sessionId/orientation', ({ params, body }) => {
      session(params.sessionId);
      const o = String(body.orientation ?? '').toUpperCase();
      if (o !== 'PORTRAIT' && o !== 'LANDSCAPE') throw invalidArgument(`Orientation '${o}' is not supported`);
      // UiDevice.setOrientationNatural / setOrientationLeft: a quarter turn for landscape.
      screen().rotation = o === 'PORTRAIT' ? 0 : 1;
      return o;
    }],
    ['GET', '/session/:sessionId/appium/settings', ({ params }) => session(params.sessionId).settings],
    ['POST', '/session/:sessionId/appium/settings', ({ params, body }) => {
      const s = session(params.sessionId);
      const settings = body.settings;
      if (!settings || typeof settings !== 'object') throw invalidArgument("'settings' must be an object");
      Object.assign(s.settings, settings);
      return s.settings;
    }],
    ['GET', '/session/:sessionId/element/:id/bounds', ({ params }) => boundsText(element(params).ui.bounds)],
  ];
}
