/** What the XPath subset evaluates: node sets and values, axes, predicates, comparisons and its functions. */

export class XPathError extends Error {}

export interface XNode {
  name: string;
  attrs: Record<string, string>;
  children: XNode[];
  parent: XNode | null;
}

export type Value = XNode[] | string | number | boolean;

export interface Ctx { node: XNode; pos: number; size: number }

export const FUNCTIONS: Record<string, (c: Ctx, args: Value[]) => Value> = {
  last: (c) => c.size,
  position: (c) => c.pos,
  count: (_c, [a]) => nodes(a).length,
  not: (_c, [a]) => !bool(a),
  true: () => true,
  false: () => false,
  contains: (_c, [a, b]) => str(a).includes(str(b)),
  'starts-with': (_c, [a, b]) => str(a).startsWith(str(b)),
  'ends-with': (_c, [a, b]) => str(a).endsWith(str(b)),
  'string-length': (c, [a]) => (a === undefined ? stringValue(c.node) : str(a)).length,
  string: (c, [a]) => (a === undefined ? stringValue(c.node) : str(a)),
  'normalize-space': (c, [a]) => (a === undefined ? stringValue(c.node) : str(a)).trim().replace(/\s+/g, ' '),
  concat: (_c, args) => args.map(str).join(''),
  'translate': (_c, [a, b, d]) => [...str(a)].map((ch) => { const i = str(b).indexOf(ch); return i < 0 ? ch : str(d)[i] ?? ''; }).join(''),
  'local-name': (c, [a]) => (a === undefined ? c.node : nodes(a)[0])?.name ?? '',
  name: (c, [a]) => (a === undefined ? c.node : nodes(a)[0])?.name ?? '',
};

export function axisNodes(axis: string, n: XNode): XNode[] {
  switch (axis) {
    case 'child': return n.children;
    case 'descendant': return descendants(n);
    case 'descendant-or-self': return [n, ...descendants(n)];
    case 'self': return [n];
    case 'parent': return n.parent ? [n.parent] : [];
    case 'ancestor': { const out: XNode[] = []; for (let p = n.parent; p; p = p.parent) out.push(p); return out; }
    case 'ancestor-or-self': { const out: XNode[] = [n]; for (let p = n.parent; p; p = p.parent) out.push(p); return out; }
    case 'following-sibling': return n.parent ? n.parent.children.slice(n.parent.children.indexOf(n) + 1) : [];
    case 'preceding-sibling': return n.parent ? n.parent.children.slice(0, n.parent.children.indexOf(n)).reverse() : [];
    default: throw new XPathError(`Unsupported axis ${axis}`);
  }
}

export function descendants(n: XNode): XNode[] {
  const out: XNode[] = [];
  const walk = (x: XNode) => { for (const c of x.children) { out.push(c); walk(c); } };
  walk(n);
  return out;
}

export function applyPredicate(set: XNode[], pred: (c: Ctx) => Value): XNode[] {
  return set.filter((node, i) => {
    const v = pred({ node, pos: i + 1, size: set.length });
    return typeof v === 'number' ? v === i + 1 : bool(v);
  });
}

export function documentOrder(root: XNode, list: XNode[]): XNode[] {
  const unique = [...new Set(list)];
  if (unique.length < 2) return unique;
  const order = new Map<XNode, number>();
  [root, ...descendants(root)].forEach((n, i) => order.set(n, i));
  return unique.sort((a, b) => (order.get(a) ?? -1) - (order.get(b) ?? -1));
}

export const isNodes = (v: Value): v is XNode[] => Array.isArray(v);
export function nodes(v: Value): XNode[] {
  if (!isNodes(v)) throw new XPathError('Expression does not select nodes');
  return v;
}
export function stringValue(n: XNode): string {
  return n.attrs['#value'] ?? '';
}
export function str(v: Value): string {
  if (isNodes(v)) return v.length ? stringValue(v[0]) : '';
  return String(v);
}
export function num(v: Value): number {
  return typeof v === 'number' ? v : Number(str(v));
}
export function bool(v: Value): boolean {
  if (isNodes(v)) return v.length > 0;
  if (typeof v === 'string') return v.length > 0;
  if (typeof v === 'number') return v !== 0 && !Number.isNaN(v);
  return v;
}
export function compare(a: Value, b: Value, op: string): boolean {
  const test = (x: string | number | boolean, y: string | number | boolean): boolean => {
    if (op === '=' || op === '!=') {
      const eq = typeof x === 'boolean' || typeof y === 'boolean' ? Boolean(x) === Boolean(y)
        : typeof x === 'number' || typeof y === 'number' ? Number(x) === Number(y) : x === y;
      return op === '=' ? eq : !eq;
    }
    const [p, q] = [Number(x), Number(y)];
    return op === '<' ? p < q : op === '>' ? p > q : op === '<=' ? p <= q : p >= q;
  };
  const values = (v: Value): Array<string | number | boolean> => (isNodes(v) ? v.map(stringValue) : [v]);
  if (typeof a === 'boolean' || typeof b === 'boolean') return test(bool(a), bool(b));
  return values(a).some((x) => values(b).some((y) => test(x, y)));
}

