/**
 * One UiAutomator2 server session: its capabilities, settings and the elements it handed out. An element is the
 * path of its node in the window; it resolves against the current screen on each use and is stale when the node
 * there is no longer the one found (another window, another layout).
 */
import { randomUUID } from 'node:crypto';
import type { DeviceScreen, UiNode } from '../screen';
import { staleElement } from '../../util/json-wire';
import { Snapshot, TreeNode, snapshot } from './tree';

/** The server's settings with their defaults (Settings.java), as GET /appium/settings returns them. */
export const DEFAULT_SETTINGS: Record<string, unknown> = {
  actionAcknowledgmentTimeout: 3000, allowInvisibleElements: false, ignoreUnimportantViews: false, compressedLayoutHierarchy: false,
  elementResponseAttributes: '', enableMultiWindows: false, enableNotificationListener: true, enableTopmostWindowFromActivePackage: false,
  keyInjectionDelay: 0, scrollAcknowledgmentTimeout: 200, shouldUseCompactResponses: true, waitForIdleTimeout: 10000,
  waitForSelectorTimeout: 10000, normalizeTagNames: false, shutdownOnPowerDisconnect: true, simpleBoundsCalculation: false,
  trackScrollEvents: true, wakeLockTimeout: 86_400_000, serverPort: 6790, mjpegServerPort: 7810, mjpegServerFramerate: 10,
  mjpegScalingFactor: 50, mjpegServerScreenshotQuality: 50, mjpegBilinearFiltering: false, useResourcesForOrientationDetection: false,
  enforceXPath1: false, limitXPathContextScope: true, disableIdLocatorAutocompletion: false, includeExtrasInPageSource: false,
  snapshotMaxDepth: 70, currentDisplayId: 0,
};

interface ElementRecord {
  path: number[];
  className: string;
  packageName: string;
  resourceId: string;
}

export class Uia2Session {
  readonly id = randomUUID();
  readonly settings: Record<string, unknown> = { ...DEFAULT_SETTINGS };
  private readonly elements = new Map<string, ElementRecord>();

  constructor(readonly capabilities: Record<string, unknown>, private readonly screen: DeviceScreen) {}

  snapshot(): Snapshot {
    return snapshot(this.screen.hierarchy(), this.screen.displayWidth, this.screen.displayHeight, this.screen.rotation);
  }

  /** An id for a node: the same node found twice keeps its id, as the server's element cache does. */
  remember(node: TreeNode): string {
    for (const [id, e] of this.elements) {
      if (e.path.join('/') === node.path.join('/') && e.className === node.ui.className && e.packageName === node.ui.packageName) return id;
    }
    const id = randomUUID();
    this.elements.set(id, { path: node.path, className: node.ui.className, packageName: node.ui.packageName, resourceId: node.ui.resourceId });
    return id;
  }

  /** The element's node on the current screen; a stale element reference when it is gone. */
  resolve(id: string, snap: Snapshot = this.snapshot()): TreeNode {
    const e = this.elements.get(id);
    const node = e && snap.nodes.find((n) => n.path.join('/') === e.path.join('/'));
    if (!e || !node || node.ui.className !== e.className || node.ui.packageName !== e.packageName || node.ui.resourceId !== e.resourceId) {
      throw staleElement(id);
    }
    return node;
  }
}

export const centerOf = (n: UiNode): [number, number] => [Math.round((n.bounds[0] + n.bounds[2]) / 2), Math.round((n.bounds[1] + n.bounds[3]) / 2)];
