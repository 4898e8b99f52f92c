/**
 * The capabilities of a WebDriver new-session request, read as the lab needs them: W3C `capabilities`
 * (`alwaysMatch` merged with each `firstMatch`, W3C rules) or the legacy `desiredCapabilities`; names in any letter
 * case, with or without `appium:`; the product's `deviceConnect*` names; our `devicelab:` options. Out come the
 * candidates in order, each with what picks the device and the clean capabilities the device's Appium server gets.
 */
import { ApiFailure } from '@devicelab/shared';
import { MAX_WAIT_MS } from '../waiting-line';

/** What a request asks of the device; mapped to the waiting line's filter by `session-start.ts`. */
export interface DeviceCriteria {
  os?: 'Android' | 'iOS';
  /** Exact version or dotted prefix (`13` takes 13.0.1). */
  osVersion?: string;
  /** `deviceName`: the device's name or model (generic names such as `Android Emulator` are no criterion). */
  deviceName?: string;
  /** Guid, serial number or vendor unique id (`deviceConnectDevice`, `udid`). */
  id?: string;
  formFactor?: string;
  /** `devicelab:filter`, as the CLI's `--filter` takes it. */
  filterText?: string;
}

export interface SessionCandidate {
  criteria: DeviceCriteria;
  /** The capabilities for the device's Appium server: `appium:`-prefixed, the lab's own removed. */
  forwarded: Record<string, unknown>;
  /** `automationName` was absent or the product's generic `Appium`: filled in per platform. */
  automationNameToFill: boolean;
  /** Seconds without a command before the lab deletes the session; 0: never (the lab's idle release applies). */
  newCommandTimeoutSeconds: number;
}

export interface NewSessionRequest {
  candidates: SessionCandidate[];
  /** `deviceConnectUserName` + `deviceConnectApiKey`, the alternative to Basic auth. */
  credentials?: { login: string; apiKey: string };
  queueTimeoutMs: number;
  /** An application of the library (Guid or name) to install before the session. */
  app?: string;
  skipInstall: boolean;
}

export const DEFAULT_QUEUE_TIMEOUT_S = 300;
/** The waiting line's own longest wait (waiting-line.ts MAX_WAIT_MS). */
export const MAX_QUEUE_TIMEOUT_S = MAX_WAIT_MS / 1000;
export const DEFAULT_NEW_COMMAND_TIMEOUT_S = 60;
const MAX_NEW_COMMAND_TIMEOUT_S = 24 * 3600;
/** More `firstMatch` entries than any client sends; each is a candidate matched in turn. */
const MAX_FIRST_MATCH = 16;

/** W3C names that stay unprefixed; every other name without a vendor prefix gets `appium:`. */
const W3C_NAMES = ['browserName', 'browserVersion', 'platformName', 'acceptInsecureCerts', 'pageLoadStrategy', 'proxy',
  'setWindowRect', 'timeouts', 'strictFileInteractability', 'unhandledPromptBehavior', 'webSocketUrl', 'userAgent'];
/** Appium names in their case-sensitive spelling, so that `platformversion` reaches Appium as `platformVersion`. */
const APPIUM_NAMES = ['automationName', 'platformVersion', 'deviceName', 'newCommandTimeout', 'noReset', 'fullReset',
  'autoGrantPermissions', 'appPackage', 'appActivity', 'appWaitActivity', 'appWaitPackage', 'bundleId', 'language',
  'locale', 'orientation', 'autoLaunch', 'autoAcceptAlerts', 'autoDismissAlerts', 'skipServerInstallation',
  'skipDeviceInitialization', 'disableWindowAnimation', 'unicodeKeyboard', 'resetKeyboard', 'printPageSourceOnFindFailure',
  'nativeWebScreenshot', 'enforceXPath1', 'shouldTerminateApp', 'forceAppLaunch', 'includeSafariInWebviews',
  'uiautomator2ServerLaunchTimeout', 'uiautomator2ServerInstallTimeout', 'adbExecTimeout', 'androidInstallTimeout',
  'appWaitDuration', 'eventTimings', 'settings', 'isHeadless', 'mjpegScreenshotUrl', 'wdaLaunchTimeout',
  'wdaConnectionTimeout', 'usePrebuiltWDA', 'useNewWDA', 'showXcodeLog', 'clearSystemFiles'];
/**
 * Names the lab decides and a client may not: the device and its port block (the gateway's default capabilities
 * set them), and paths or hosts on the gateway machine. `app` names a library application instead (see `app`).
 */
const REFUSED_NAMES = new Set(['udid', 'systemport', 'mjpegserverport', 'chromedriverport', 'chromedriverports',
  'wdalocalport', 'wdaremoteport', 'webdriveragenturl', 'remoteadbhost', 'adbport', 'chromedriverexecutable',
  'chromedriverexecutabledir', 'chromedriverchromemappingfile', 'otherapps', 'keystorepath', 'deriveddatapath',
  'xcodeconfigfile', 'bootstrappath', 'agentpath', 'wdabaseurl', 'app', 'appium:options']);
const GENERIC_DEVICE_NAMES = new Set(['', '*', 'any', 'android', 'android emulator', 'android device', 'ios',
  'iphone', 'iphone simulator', 'ipad', 'ipad simulator', 'ios device']);

const canonical = new Map<string, string>([...W3C_NAMES, ...APPIUM_NAMES].map((name) => [name.toLowerCase(), name]));
const w3cNames = new Set(W3C_NAMES.map((name) => name.toLowerCase()));

const invalid = (message: string) => new ApiFailure(message, 'INVALID_CAPABILITIES');

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The name a capability is matched by: lower case, without `appium:`. */
function keyOf(name: string): string {
  const lower = name.toLowerCase();
  return lower.startsWith('appium:') ? lower.slice('appium:'.length) : lower;
}

/** W3C "merging capabilities": a name of `firstMatch` also in `alwaysMatch` is an error. */
function merge(always: Record<string, unknown>, first: Record<string, unknown>): Record<string, unknown> {
  const alwaysKeys = new Set(Object.keys(always).map(keyOf));
  for (const name of Object.keys(first)) {
    if (alwaysKeys.has(keyOf(name))) throw invalid(`Capability '${name.slice(0, 80)}' is in both alwaysMatch and firstMatch.`);
  }
  return { ...always, ...first };
}

/** The capability sets in order: W3C first, else the legacy form. */
function capabilitySets(body: unknown): { sets: Record<string, unknown>[]; legacy: Record<string, unknown> } {
  if (!isObject(body)) throw invalid('The new session body must be a JSON object with "capabilities".');
  const legacy = body.desiredCapabilities ?? {};
  if (!isObject(legacy)) throw invalid('"desiredCapabilities" must be an object.');
  const w3c = body.capabilities;
  if (w3c === undefined) {
    if (body.desiredCapabilities === undefined) throw invalid('The new session body has neither "capabilities" nor "desiredCapabilities".');
    return { sets: [legacy], legacy };
  }
  if (!isObject(w3c)) throw invalid('"capabilities" must be an object.');
  const always = w3c.alwaysMatch ?? {};
  const firsts = w3c.firstMatch ?? [{}];
  if (!isObject(always)) throw invalid('"capabilities.alwaysMatch" must be an object.');
  if (!Array.isArray(firsts) || firsts.length === 0) throw invalid('"capabilities.firstMatch" must be a non-empty list.');
  if (firsts.length > MAX_FIRST_MATCH) throw invalid(`"capabilities.firstMatch" may hold at most ${MAX_FIRST_MATCH} entries.`);
  return {
    sets: firsts.map((first) => {
      if (!isObject(first)) throw invalid('Every "capabilities.firstMatch" entry must be an object.');
      return merge(always, first);
    }),
    legacy,
  };
}

/** Reads one capability set by matching name. */
class CapabilitySet {
  private readonly values = new Map<string, unknown>();

  constructor(readonly raw: Record<string, unknown>, fallback: Record<string, unknown> = {}) {
    for (const source of [raw, fallback]) {
      for (const [name, value] of Object.entries(source)) if (!this.values.has(keyOf(name))) this.values.set(keyOf(name), value);
    }
  }

  value(...names: string[]): unknown {
    for (const name of names) {
      const value = this.values.get(name.toLowerCase());
      if (value !== undefined && value !== null) return value;
    }
    return undefined;
  }

  text(...names: string[]): string | undefined {
    const value = this.value(...names);
    if (value === undefined) return undefined;
    if (typeof value === 'string') return value.trim() || undefined;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    throw invalid(`Capability '${names[0]}' must be a string.`);
  }

  flag(name: string): boolean {
    const value = this.value(name);
    if (value === undefined) return false;
    if (typeof value === 'boolean') return value;
    if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
    throw invalid(`Capability '${name}' must be true or false.`);
  }

  seconds(name: string, fallback: number, max: number): number {
    const value = this.value(name);
    if (value === undefined) return fallback;
    const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) throw invalid(`Capability '${name}' must be a number of seconds (0 or more).`);
    return Math.min(n, max);
  }
}

function platformOf(value: string | undefined): DeviceCriteria['os'] {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  if (lower === 'android') return 'Android';
  if (lower === 'ios') return 'iOS';
  throw invalid(`platformName '${value.slice(0, 40)}' is not one the lab has: use Android or iOS.`);
}

/** Clean capabilities for Appium: our own names removed, names spelled as Appium knows them, `appium:` added. */
function forwardedOf(raw: Record<string, unknown>): { forwarded: Record<string, unknown>; automationNameToFill: boolean } {
  const forwarded: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    const key = keyOf(name);
    if (key.startsWith('deviceconnect') || key.startsWith('devicelab:') || REFUSED_NAMES.has(key)) continue;
    if (key === 'newcommandtimeout') continue; // the lab keeps the session's idle time itself (set below)
    if (w3cNames.has(key)) forwarded[canonical.get(key)!] = value;
    else if (key.includes(':')) forwarded[name] = value; // another vendor's extension, as sent
    else forwarded[`appium:${canonical.get(key) ?? name.replace(/^appium:/i, '')}`] = value;
  }
  const automationName = forwarded['appium:automationName'];
  const automationNameToFill = automationName === undefined || (typeof automationName === 'string' && automationName.toLowerCase() === 'appium');
  if (automationNameToFill) delete forwarded['appium:automationName'];
  return { forwarded, automationNameToFill };
}

function criteriaOf(caps: CapabilitySet): DeviceCriteria {
  const deviceName = caps.text('deviceName');
  return {
    os: platformOf(caps.text('platformName')),
    osVersion: caps.text('platformVersion'),
    deviceName: deviceName && !GENERIC_DEVICE_NAMES.has(deviceName.toLowerCase()) ? deviceName : undefined,
    id: caps.text('deviceConnectDevice', 'devicelab:device', 'udid'),
    formFactor: caps.text('devicelab:formFactor'),
    filterText: caps.text('devicelab:filter'),
  };
}

/** Reads a parsed new-session body; a body the lab cannot use fails with INVALID_CAPABILITIES. */
export function readNewSessionRequest(body: unknown): NewSessionRequest {
  const { sets, legacy } = capabilitySets(body);
  const first = new CapabilitySet(sets[0], legacy);
  const login = first.text('deviceConnectUserName'); // also deviceConnectUsername: names match in any case
  const apiKey = first.text('deviceConnectApiKey');
  if ((login === undefined) !== (apiKey === undefined)) {
    throw invalid('deviceConnectUserName and deviceConnectApiKey go together: give both or neither.');
  }
  const app = first.text('devicelab:app') ?? first.text('app');
  const candidates = sets.map((raw) => {
    const caps = new CapabilitySet(raw, legacy);
    const { forwarded, automationNameToFill } = forwardedOf({ ...legacy, ...raw });
    const newCommandTimeout = caps.seconds('newCommandTimeout', DEFAULT_NEW_COMMAND_TIMEOUT_S, MAX_NEW_COMMAND_TIMEOUT_S);
    forwarded['appium:newCommandTimeout'] = newCommandTimeout;
    return { criteria: criteriaOf(caps), forwarded, automationNameToFill, newCommandTimeoutSeconds: newCommandTimeout };
  });
  return {
    candidates,
    credentials: login !== undefined && apiKey !== undefined ? { login, apiKey } : undefined,
    queueTimeoutMs: first.seconds('devicelab:queueTimeout', DEFAULT_QUEUE_TIMEOUT_S, MAX_QUEUE_TIMEOUT_S) * 1000,
    app,
    skipInstall: first.flag('deviceConnectSkipInstall'),
  };
}

/** The automation driver per platform, for `automationName` absent or `Appium`. */
export const AUTOMATION_NAMES: Record<'Android' | 'iOS', string> = { Android: 'UiAutomator2', iOS: 'XCUITest' };

/** The W3C body for the device's Appium server once the device (and its platform) is known. */
export function gatewaySessionBody(candidate: SessionCandidate, platform: 'Android' | 'iOS'): { capabilities: { alwaysMatch: Record<string, unknown>; firstMatch: [Record<string, never>] } } {
  const alwaysMatch: Record<string, unknown> = { ...candidate.forwarded, platformName: platform };
  if (candidate.automationNameToFill) alwaysMatch['appium:automationName'] = AUTOMATION_NAMES[platform];
  return { capabilities: { alwaysMatch, firstMatch: [{}] } };
}
