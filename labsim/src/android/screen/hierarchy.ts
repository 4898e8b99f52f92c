/**
 * The view hierarchy of what a simulated Android screen shows, as UiAutomator dumps it: a root FrameLayout of the
 * foreground window's package, the launcher's icons as clickable TextViews whose text is the app's label, an
 * app's title, text field, button and status line.
 */
import { AppScreenLayout, Box, LaunchableApp, Metrics, appScreen, content, launcherGrid, recentCards } from './layout';

export interface UiNode {
  className: string;
  text: string;
  resourceId: string;
  contentDesc: string;
  packageName: string;
  bounds: [number, number, number, number];
  clickable: boolean;
  focused: boolean;
  children: UiNode[];
}

/** What an app's screen holds. */
export interface AppUiState {
  text: string;
  focused: boolean;
  status: string;
}

export type ScreenView = { kind: 'launcher' } | { kind: 'recents' } | { kind: 'app'; app: LaunchableApp; ui: AppUiState };

export interface HierarchyInput {
  metrics: Metrics;
  view: ScreenView;
  launcherPackage: string;
  apps: LaunchableApp[];
  recents: LaunchableApp[];
}

function node(className: string, packageName: string, bounds: Box, extra: Partial<UiNode> = {}): UiNode {
  return { className, text: '', resourceId: '', contentDesc: '', packageName, bounds: [...bounds], clickable: false, focused: false, children: [], ...extra };
}

export function buildHierarchy(input: HierarchyInput): UiNode {
  const m = input.metrics;
  const full: Box = [0, 0, m.width, m.height];
  const view = input.view;
  if (view.kind === 'app') {
    const pkg = view.app.packageName;
    const root = node('android.widget.FrameLayout', pkg, full);
    root.children.push(appNodes(pkg, view.app.label, view.ui, appScreen(m)));
    return root;
  }
  const pkg = input.launcherPackage;
  const root = node('android.widget.FrameLayout', pkg, full);
  const area = content(m);
  if (view.kind === 'recents') {
    const list = node('androidx.recyclerview.widget.RecyclerView', pkg, area, { resourceId: `${pkg}:id/overview_panel` });
    list.children = recentCards(m, input.recents).map(({ app, card }) =>
      node('android.widget.FrameLayout', pkg, card, { text: app.label, contentDesc: app.label, resourceId: `${pkg}:id/task`, clickable: true }));
    root.children.push(list);
    return root;
  }
  const workspace = node('android.view.ViewGroup', pkg, area, { resourceId: `${pkg}:id/workspace` });
  workspace.children = launcherGrid(m, input.apps).map(({ app, cell }) =>
    node('android.widget.TextView', pkg, cell, { text: app.label, contentDesc: app.label, resourceId: `${pkg}:id/icon`, clickable: true }));
  root.children.push(workspace);
  return root;
}

function appNodes(pkg: string, label: string, ui: AppUiState, l: AppScreenLayout): UiNode {
  const page = node('android.widget.LinearLayout', pkg, l.page, { resourceId: `${pkg}:id/content` });
  page.children = [
    node('android.widget.TextView', pkg, l.titleBar, { text: label, resourceId: `${pkg}:id/title` }),
    node('android.widget.EditText', pkg, l.field, { text: ui.text, resourceId: `${pkg}:id/input`, clickable: true, focused: ui.focused }),
    node('android.widget.Button', pkg, l.button, { text: 'Tap me', resourceId: `${pkg}:id/button`, clickable: true }),
    node('android.widget.TextView', pkg, l.status, { text: ui.status, resourceId: `${pkg}:id/status` }),
  ];
  return page;
}

/** Every node of the tree, depth first. */
export function flatten(root: UiNode): UiNode[] {
  return [root, ...root.children.flatMap(flatten)];
}

/** The deepest clickable node at a point. */
export function hitTest(root: UiNode, x: number, y: number): UiNode | undefined {
  let found: UiNode | undefined;
  for (const n of flatten(root)) {
    const [l, t, r, b] = n.bounds;
    if (n.clickable && x >= l && x < r && y >= t && y < b) found = n;
  }
  return found;
}
