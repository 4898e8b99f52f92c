/** A WebDriverAgent session: its capabilities, settings and the elements it handed out (paths in the front app's tree). */
import { randomUUID } from 'node:crypto';
import { staleElement } from '../../util/json-wire';
import type { XctestScreen } from './xctest-screen';
import { WdaSnapshot, WdaTreeNode, wdaSnapshot } from './wda-tree';

/**
 * FBConfiguration's settings, as GET /appium/settings returns them. They are the runner's, not a session's: a new
 * session resets the session-scoped ones (FBConfiguration resetSessionSettings) and keeps the MJPEG server's.
 */
export const WDA_DEFAULT_SETTINGS: Record<string, unknown> = {
  mjpegServerFramerate: 10, mjpegServerScreenshotQuality: 25, mjpegScalingFactor: 100, mjpegFixOrientation: false, screenshotQuality: 3,
  elementResponseAttributes: 'type,label', shouldUseCompactResponses: true, useFirstMatch: false, boundElementsByIndex: false,
  reduceMotion: false, keyboardAutocorrection: false, keyboardPrediction: false, snapshotMaxDepth: 50, defaultActiveApplication: 'auto',
  activeAppDetectionPoint: '64.00,64.00', includeNonModalElements: false, acceptAlertButtonSelector: '', dismissAlertButtonSelector: '',
  screenshotOrientation: 'auto', waitForIdleTimeout: 10, animationCoolOffTimeout: 2, customSnapshotTimeout: 15, maxTypingFrequency: 60,
  respectSystemAlerts: false, useClearTextShortcut: true, limitXpathContextScope: true, autoClickAlertSelector: '', includeHittableInPageSource: false,
  includeNativeFrameInPageSource: false, includeMinMaxValueInPageSource: false, enforceCustomSnapshots: false,
};

interface ElementRecord {
  bundle: string;
  path: number[];
  type: string;
}

/** Settings a new session leaves as they were (process-level in WDA). */
const PROCESS_SETTINGS = new Set(['mjpegServerFramerate', 'mjpegServerScreenshotQuality', 'mjpegScalingFactor']);

export function resetSessionSettings(settings: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(WDA_DEFAULT_SETTINGS)) if (!PROCESS_SETTINGS.has(key)) settings[key] = value;
}

export class WdaSession {
  readonly id = randomUUID().toUpperCase();
  private readonly elements = new Map<string, ElementRecord>();

  constructor(readonly capabilities: Record<string, unknown>, private readonly screen: XctestScreen,
    /** The runner's settings (shared by its sessions). */
    readonly settings: Record<string, unknown> = { ...WDA_DEFAULT_SETTINGS }) {}

  snapshot(): WdaSnapshot {
    return wdaSnapshot(this.screen.tree(), this.screen.width, this.screen.height);
  }

  remember(t: WdaTreeNode): string {
    const bundle = this.screen.activeBundle();
    for (const [id, e] of this.elements) if (e.bundle === bundle && e.type === t.node.type && e.path.join('/') === t.path.join('/')) return id;
    const id = randomUUID().toUpperCase();
    this.elements.set(id, { bundle, path: t.path, type: t.node.type });
    return id;
  }

  resolve(id: string, snap: WdaSnapshot = this.snapshot()): WdaTreeNode {
    const e = this.elements.get(id);
    const t = e && e.bundle === this.screen.activeBundle() ? snap.nodes.find((n) => n.path.join('/') === e.path.join('/')) : undefined;
    if (!e || !t || t.node.type !== e.type) throw staleElement(id);
    return t;
  }
}
