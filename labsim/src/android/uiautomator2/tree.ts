/**
 * The screen's node tree as the UiAutomator2 server exposes it: the attributes of AccessibilityNodeInfoDumper (the
 * page source XML), the same tree for XPath, and the path of child indexes that names a node across snapshots.
 */
import type { UiNode } from '../screen';
import type { XNode } from '../../util/mini-xpath';

/** A node of one snapshot: its UiNode, where it sits and its XML element. */
export interface TreeNode {
  ui: UiNode;
  /** Child indexes from the window's root (empty for the root). */
  path: number[];
  x: XNode;
}

export interface Snapshot {
  /** The `hierarchy` element; its one child is the window's root. */
  root: XNode;
  nodes: TreeNode[];
  byX: Map<XNode, TreeNode>;
  rotation: number;
  width: number;
  height: number;
}

export const boundsText = (b: UiNode['bounds']): string => `[${b[0]},${b[1]}][${b[2]},${b[3]}]`;

/** What the dumper writes for a node, in its order (Attribute.java's exposed attributes). */
export function nodeAttributes(n: UiNode, index: number, width: number, height: number): Record<string, string> {
  const [l, t, r, b] = n.bounds;
  const displayed = r > l && b > t && l < width && t < height && r > 0 && b > 0;
  const editable = n.className.endsWith('EditText');
  return {
    index: String(index),
    package: n.packageName,
    class: n.className,
    text: n.text,
    'resource-id': n.resourceId,
    'content-desc': n.contentDesc,
    checkable: 'false',
    checked: 'false',
    clickable: String(n.clickable),
    enabled: 'true',
    focusable: String(n.clickable || editable),
    focused: String(n.focused),
    'long-clickable': String(n.clickable && !editable),
    password: 'false',
    scrollable: 'false',
    selected: 'false',
    bounds: boundsText(n.bounds),
    displayed: String(displayed),
  };
}

/** XML tag of a class name (AccessibilityNodeInfoDumper.toXmlNodeName). */
function tagOf(className: string): string {
  const cleaned = className.replace(/[^A-Za-z0-9_.\-]/g, '_').replace(/^[^A-Za-z_]+/, '');
  return cleaned || 'android.view.View';
}

export function snapshot(root: UiNode, width: number, height: number, rotation: number): Snapshot {
  const hierarchy: XNode = { name: 'hierarchy', attrs: { index: '0', class: 'hierarchy', rotation: String(rotation), width: String(width), height: String(height) }, children: [], parent: null };
  const nodes: TreeNode[] = [];
  const byX = new Map<XNode, TreeNode>();
  const add = (ui: UiNode, parent: XNode, index: number, path: number[]): void => {
    const x: XNode = { name: tagOf(ui.className), attrs: nodeAttributes(ui, index, width, height), children: [], parent };
    parent.children.push(x);
    const node = { ui, path, x };
    nodes.push(node);
    byX.set(x, node);
    ui.children.forEach((c, i) => add(c, x, i, [...path, i]));
  };
  add(root, hierarchy, 0, []);
  return { root: hierarchy, nodes, byX, rotation, width, height };
}

const escapeXml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;')
    // Characters XML 1.0 cannot carry are dropped, as the dumper's stripInvalidXMLChars does.
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');

/** The page source: `<?xml ...?>` and the hierarchy, indented as the dumper's XmlSerializer does. */
export function sourceXml(s: Snapshot): string {
  const lines: string[] = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"];
  const write = (x: XNode, depth: number): void => {
    const pad = '  '.repeat(depth);
    const attrs = Object.entries(x.attrs).map(([k, v]) => ` ${k}="${escapeXml(v)}"`).join('');
    if (!x.children.length) lines.push(`${pad}<${x.name}${attrs} />`);
    else {
      lines.push(`${pad}<${x.name}${attrs}>`);
      x.children.forEach((c) => write(c, depth + 1));
      lines.push(`${pad}</${x.name}>`);
    }
  };
  write(s.root, 0);
  return lines.join('\n');
}
