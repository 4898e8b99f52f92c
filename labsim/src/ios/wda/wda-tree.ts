/**
 * The XCUIElement tree as WebDriverAgent serves it: the XML source (FBXPath's attributes: type, value, name,
 * label, enabled, visible, accessible, x, y, width, height, index), its JSON form, and lookups by WDA's
 * strategies: accessibility id / id / name, class name, xpath, predicate string and class chain (basics).
 */
import { invalidArgument, invalidSelector } from '../../util/json-wire';
import { XNode, XPathError, selectXPath } from '../../util/mini-xpath';
import { backtracks } from '../../android/shell/toybox-text';
import type { WdaNode } from './xctest-screen';

export interface WdaTreeNode {
  node: WdaNode;
  path: number[];
  x: XNode;
}

export interface WdaSnapshot {
  root: XNode;
  nodes: WdaTreeNode[];
  byX: Map<XNode, WdaTreeNode>;
}

export function isVisible(n: WdaNode, width: number, height: number): boolean {
  const [x, y, w, h] = n.rect;
  return w > 0 && h > 0 && x < width && y < height && x + w > 0 && y + h > 0;
}

export function attributesOf(n: WdaNode, index: number, width: number, height: number): Record<string, string> {
  const a: Record<string, string> = { type: n.type };
  if (n.value !== null) a.value = n.value;
  if (n.name !== null) a.name = n.name;
  if (n.label !== null) a.label = n.label;
  Object.assign(a, {
    enabled: String(n.enabled), visible: String(isVisible(n, width, height)), accessible: String(n.accessible),
    x: String(n.rect[0]), y: String(n.rect[1]), width: String(n.rect[2]), height: String(n.rect[3]), index: String(index),
  });
  return a;
}

export function wdaSnapshot(root: WdaNode, width: number, height: number): WdaSnapshot {
  const nodes: WdaTreeNode[] = [];
  const byX = new Map<XNode, WdaTreeNode>();
  const add = (n: WdaNode, parent: XNode | null, index: number, path: number[]): XNode => {
    const x: XNode = { name: n.type, attrs: attributesOf(n, index, width, height), children: [], parent };
    parent?.children.push(x);
    const entry = { node: n, path, x };
    nodes.push(entry);
    byX.set(x, entry);
    n.children.forEach((c, i) => add(c, x, i, [...path, i]));
    return x;
  };
  return { root: add(root, null, 0, []), nodes, byX };
}

const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function wdaSourceXml(s: WdaSnapshot): string {
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const write = (x: XNode, depth: number): void => {
    const pad = '  '.repeat(depth);
    const attrs = Object.entries(x.attrs).map(([k, v]) => ` ${k}="${escapeXml(v)}"`).join('');
    if (!x.children.length) lines.push(`${pad}<${x.name}${attrs}/>`);
    else {
      lines.push(`${pad}<${x.name}${attrs}>`);
      x.children.forEach((c) => write(c, depth + 1));
      lines.push(`${pad}</${x.name}>`);
    }
  };
  write(s.root, 0);
  return lines.join('\n') + '\n';
}

export function wdaSourceJson(n: WdaNode, width: number, height: number): Record<string, unknown> {
  const [x, y, w, h] = n.rect;
  return {
    isEnabled: n.enabled ? '1' : '0', isVisible: isVisible(n, width, height) ? '1' : '0', isAccessible: n.accessible ? '1' : '0',
    frame: `{{${x}, ${y}}, {${w}, ${h}}}`, rect: { x, y, width: w, height: h }, value: n.value, label: n.label, type: n.type.replace(/^XCUIElementType/, ''),
    name: n.name, rawIdentifier: n.name, children: n.children.map((c) => wdaSourceJson(c, width, height)),
  };
}

// ---- NSPredicate basics: comparisons of element attributes joined by AND / OR / NOT ----

type Pred = (n: WdaTreeNode) => boolean;

function predicateValue(t: WdaTreeNode, key: string): string | boolean | number | null {
  const n = t.node;
  switch (key) {
    case 'name': case 'identifier': return n.name;
    case 'label': return n.label;
    case 'value': return n.value;
    case 'type': case 'elementType': return n.type;
    case 'enabled': case 'isEnabled': return n.enabled;
    case 'visible': case 'isVisible': return true;
    case 'accessible': case 'isAccessible': return n.accessible;
    case 'index': return t.path[t.path.length - 1] ?? 0;
    default: throw invalidSelector(`The attribute '${key}' is unknown in a predicate`);
  }
}

/** MATCHES: the whole value against a regular expression, refused when it could backtrack without end. */
function matches(pattern: string, value: string): boolean {
  let re: RegExp;
  try {
    if (backtracks(pattern)) throw new Error('pattern too complex');
    re = new RegExp(`^(?:${pattern})$`);
  } catch {
    throw invalidSelector(`Invalid regular expression '${pattern}'`);
  }
  return re.test(value);
}

export function parsePredicate(source: string): Pred {
  const tokens = source.match(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|==|!=|>=|<=|=|<|>|\(|\)|\[[cdn]+\]|[A-Za-z_][\w.]*|-?\d+(?:\.\d+)?|\S/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const upper = () => (peek() ?? '').toUpperCase();
  const or = (): Pred => {
    let l = and();
    while (upper() === 'OR' || peek() === '||') { i++; const a = l, b = and(); l = (n) => a(n) || b(n); }
    return l;
  };
  const and = (): Pred => {
    let l = not();
    while (upper() === 'AND' || peek() === '&&') { i++; const a = l, b = not(); l = (n) => a(n) && b(n); }
    return l;
  };
  const not = (): Pred => {
    if (upper() === 'NOT' || peek() === '!') { i++; const a = not(); return (n) => !a(n); }
    if (peek() === '(') {
      i++;
      const e = or();
      if (tokens[i++] !== ')') throw invalidSelector(`Missing ')' in predicate '${source}'`);
      return e;
    }
    return comparison();
  };
  const literal = (t: string | undefined): string | number | boolean | null => {
    if (t === undefined) throw invalidSelector(`Incomplete predicate '${source}'`);
    if (/^['"]/.test(t)) return t.slice(1, -1).replace(/\\(.)/g, '$1');
    if (/^-?\d/.test(t)) return Number(t);
    if (/^(true|yes)$/i.test(t)) return true;
    if (/^(false|no)$/i.test(t)) return false;
    if (/^(nil|null)$/i.test(t)) return null;
    throw invalidSelector(`Unexpected '${t}' in predicate '${source}'`);
  };
  const comparison = (): Pred => {
    const key = tokens[i++];
    if (!key || !/^[A-Za-z_]/.test(key)) throw invalidSelector(`Invalid predicate '${source}'`);
    let op = (tokens[i++] ?? '').toUpperCase();
    let modifiers = '';
    if (/^\[[cdn]+\]$/.test(peek() ?? '')) modifiers = tokens[i++];
    const want = literal(tokens[i++]);
    if (op === '=') op = '==';
    const fold = (v: unknown) => (modifiers.includes('c') ? String(v ?? '').toLowerCase() : String(v ?? ''));
    return (n) => {
      const have = predicateValue(n, key);
      if (typeof want === 'boolean' || typeof have === 'boolean') {
        const eq = Boolean(have) === Boolean(want === 1 ? true : want);
        return op === '!=' ? !eq : eq;
      }
      if (typeof want === 'number' && typeof have === 'number') {
        return op === '==' ? have === want : op === '!=' ? have !== want : op === '>' ? have > want : op === '<' ? have < want : op === '>=' ? have >= want : have <= want;
      }
      const [h, w] = [fold(have), fold(want)];
      switch (op) {
        case '==': return have !== null && h === w;
        case '!=': return h !== w;
        case 'CONTAINS': return h.includes(w);
        case 'BEGINSWITH': return h.startsWith(w);
        case 'ENDSWITH': return h.endsWith(w);
        case 'LIKE': return new RegExp(`^${w.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 's').test(h);
        case 'MATCHES': return matches(w, h);
        default: throw invalidSelector(`Operator '${op}' is not supported in predicate '${source}'`);
      }
    };
  };
  const pred = or();
  if (i < tokens.length) throw invalidSelector(`Unexpected '${tokens[i]}' in predicate '${source}'`);
  return pred;
}

// ---- class chain: `**/XCUIElementTypeCell[`name BEGINSWITH "A"`][2]/XCUIElementTypeButton` ----

function classChain(source: string, snap: WdaSnapshot, scope: WdaTreeNode): WdaTreeNode[] {
  const childrenOf = (t: WdaTreeNode) => t.x.children.map((c) => snap.byX.get(c)!);
  const descendantsOf = (t: WdaTreeNode): WdaTreeNode[] => childrenOf(t).flatMap((c) => [c, ...descendantsOf(c)]);
  const parts = source.match(/(\*\*|[^/`[\]]+)((?:\[(?:`[^`]*`|\$[^$]*\$|-?\d+)\])*)/g);
  if (!parts || parts.join('/').replace(/\s/g, '') !== source.replace(/\s/g, '').replace(/\/+/g, '/')) throw invalidSelector(`Cannot parse class chain '${source}'`);
  let current = [scope];
  let deep = false;
  for (const part of parts) {
    if (part === '**') { deep = true; continue; }
    const m = /^([^[]+)(.*)$/.exec(part)!;
    const type = m[1].trim();
    let found = current.flatMap((c) => (deep ? descendantsOf(c) : childrenOf(c))).filter((t) => type === '*' || t.node.type === type);
    deep = false;
    for (const [, predicate, index] of m[2].matchAll(/\[(?:`([^`]*)`|(-?\d+))\]/g)) {
      if (predicate !== undefined) found = found.filter(parsePredicate(predicate));
      else {
        const k = Number(index);
        const picked = k > 0 ? found[k - 1] : found[found.length + k];
        found = picked ? [picked] : [];
      }
    }
    current = [...new Set(found)];
  }
  return current;
}

/** The elements a WDA locator selects, under `context` (its descendants) or in the whole tree. */
export function findWdaNodes(snap: WdaSnapshot, using: string, value: string, context?: WdaTreeNode): WdaTreeNode[] {
  const scope = context ?? snap.nodes[0];
  const inScope = (t: WdaTreeNode) => t !== scope && scope.path.every((v, i) => t.path[i] === v) && t.path.length > scope.path.length;
  const candidates = snap.nodes.filter((t) => (context ? inScope(t) : true));
  switch (using) {
    case 'accessibility id': case 'id': case 'name':
      return candidates.filter((t) => t.node.name === value);
    case 'class name':
      return candidates.filter((t) => t.node.type === value);
    case 'link text': case 'partial link text': {
      const eq = value.indexOf('=');
      const [attr, text] = eq > 0 ? [value.slice(0, eq), value.slice(eq + 1)] : ['label', value];
      return candidates.filter((t) => {
        const v = String(predicateValue(t, attr) ?? '');
        return using === 'link text' ? v === text : v.includes(text);
      });
    }
    case 'predicate string':
      return candidates.filter(parsePredicate(value));
    case 'class chain':
      return classChain(value, snap, scope);
    case 'xpath': {
      try {
        const inTree = new Set(candidates);
        return selectXPath(value, snap.root, context?.x ?? snap.root).map((x) => snap.byX.get(x)).filter((t): t is WdaTreeNode => !!t && inTree.has(t));
      } catch (e) {
        if (e instanceof XPathError) throw invalidSelector(`Cannot evaluate '${value}': ${e.message}`);
        throw e;
      }
    }
    default:
      throw invalidArgument(`Invalid locator requested: ${using}`);
  }
}
