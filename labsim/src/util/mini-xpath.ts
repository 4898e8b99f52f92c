/**
 * XPath 1.0 over an element tree, the part UI automation locators use: absolute and relative location paths with
 * the child, descendant(-or-self), self, parent and attribute steps, name tests and `*`, predicates (positions,
 * `last()`, comparisons, `and`/`or`, `not`, `contains`, `starts-with`, `text()`, `string-length`, `count`,
 * `position`) and unions. Enough for what Appium clients send to a device-side server; anything else is an
 * invalid selector.
 */

import { type Ctx, FUNCTIONS, XPathError, type Value, type XNode, applyPredicate, axisNodes, bool, compare, descendants, documentOrder, isNodes, nodes, num, str } from './xpath-eval';

export { XPathError, type XNode } from './xpath-eval';

type Token = { t: 'name' | 'str' | 'num' | 'op'; v: string };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) { i++; continue; }
    if (c === '"' || c === "'") {
      const end = src.indexOf(c, i + 1);
      if (end < 0) throw new XPathError('Unterminated string literal');
      out.push({ t: 'str', v: src.slice(i + 1, end) });
      i = end + 1;
      continue;
    }
    const two = src.slice(i, i + 2);
    if (['//', '..', '!=', '<=', '>=', '::'].includes(two)) { out.push({ t: 'op', v: two }); i += 2; continue; }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^[0-9]*\.?[0-9]+/.exec(src.slice(i))!;
      out.push({ t: 'num', v: m[0] });
      i += m[0].length;
      continue;
    }
    if ('/[]()@,|=<>.*+-'.includes(c)) { out.push({ t: 'op', v: c }); i++; continue; }
    const m = /^[A-Za-z_][\w.\-]*(:[A-Za-z_][\w.\-]*)?/.exec(src.slice(i));
    if (!m) throw new XPathError(`Unexpected character '${c}'`);
    out.push({ t: 'name', v: m[0] });
    i += m[0].length;
  }
  return out;
}


class Parser {
  private i = 0;
  constructor(private readonly toks: Token[], private readonly root: XNode) {}

  private peek(v?: string): Token | undefined {
    const t = this.toks[this.i];
    return v === undefined || (t && t.v === v && (t.t === 'op' || t.t === 'name')) ? t : undefined;
  }
  private take(v: string): boolean {
    if (this.peek(v)) { this.i++; return true; }
    return false;
  }
  private expect(v: string): void {
    if (!this.take(v)) throw new XPathError(`Expected '${v}'`);
  }
  done(): boolean {
    return this.i >= this.toks.length;
  }

  // Each parse step returns a function evaluating it in a context.
  expr(): (c: Ctx) => Value {
    return this.or();
  }
  private or(): (c: Ctx) => Value {
    let l = this.and();
    while (this.peek('or')?.t === 'name') {
      this.i++;
      const a = l, b = this.and();
      l = (c) => bool(a(c)) || bool(b(c));
    }
    return l;
  }
  private and(): (c: Ctx) => Value {
    let l = this.eq();
    while (this.peek('and')?.t === 'name') {
      this.i++;
      const a = l, b = this.eq();
      l = (c) => bool(a(c)) && bool(b(c));
    }
    return l;
  }
  private eq(): (c: Ctx) => Value {
    let l = this.rel();
    for (;;) {
      const op = this.peek('=') ? '=' : this.peek('!=') ? '!=' : undefined;
      if (!op) return l;
      this.i++;
      const a = l, b = this.rel();
      l = (c) => compare(a(c), b(c), op);
    }
  }
  private rel(): (c: Ctx) => Value {
    let l = this.additive();
    for (;;) {
      const op = ['<=', '>=', '<', '>'].find((o) => this.peek(o));
      if (!op) return l;
      this.i++;
      const a = l, b = this.additive();
      l = (c) => compare(a(c), b(c), op);
    }
  }
  private additive(): (c: Ctx) => Value {
    let l = this.unary();
    for (;;) {
      const op = this.peek('+') ? 1 : this.peek('-') ? -1 : 0;
      if (!op) return l;
      this.i++;
      const a = l, b = this.unary();
      l = (c) => num(a(c)) + op * num(b(c));
    }
  }
  private unary(): (c: Ctx) => Value {
    if (this.take('-')) {
      const a = this.unary();
      return (c) => -num(a(c));
    }
    return this.union();
  }
  private union(): (c: Ctx) => Value {
    let l = this.path();
    while (this.take('|')) {
      const a = l, b = this.path();
      l = (c) => documentOrder(this.root, [...nodes(a(c)), ...nodes(b(c))]);
    }
    return l;
  }
  private path(): (c: Ctx) => Value {
    const t = this.peek();
    if (!t) throw new XPathError('Unexpected end of expression');
    if (t.t === 'op' && (t.v === '/' || t.v === '//')) return this.locationPath();
    if (t.t === 'str' || t.t === 'num' || (t.t === 'op' && t.v === '(') || (t.t === 'name' && this.toks[this.i + 1]?.v === '(' && !['text', 'node'].includes(t.v))) {
      let primary = this.primary();
      while (this.peek('[')) {
        const base = primary, pred = this.predicate();
        primary = (c) => applyPredicate(nodes(base(c)), pred);
      }
      if (this.peek('/') || this.peek('//')) {
        const base = primary, rest = this.relativePath();
        return (c) => documentOrder(this.root, nodes(base(c)).flatMap((n) => rest([n])));
      }
      return primary;
    }
    const rel = this.relativePath(false);
    return (c) => rel([c.node]);
  }
  private locationPath(): (c: Ctx) => Value {
    const root = this.root;
    const doc: XNode = { name: '#document', attrs: {}, children: [root], parent: null };
    if (this.peek('/') && (this.done() || !this.startsStep(this.i + 1))) {
      this.i++;
      return () => [doc];
    }
    const rel = this.relativePath();
    return () => rel([doc]);
  }
  private startsStep(i: number): boolean {
    const t = this.toks[i];
    return !!t && (t.t === 'name' || ['*', '@', '.', '..'].includes(t.v));
  }
  /** Steps separated by / and //; with `leading`, the path starts with one of them. */
  private relativePath(leading = true): (from: XNode[]) => XNode[] {
    const steps: Array<(from: XNode[]) => XNode[]> = [];
    let first = true;
    for (;;) {
      let sep: string | undefined;
      if (this.peek('//')) sep = '//';
      else if (this.peek('/')) sep = '/';
      if (!sep && (!first || leading)) break;
      if (sep) this.i++;
      if (sep === '//') steps.push((from) => from.flatMap((n) => [n, ...descendants(n)]));
      steps.push(this.step());
      first = false;
    }
    return (from) => steps.reduce((set, step) => documentOrder(this.root, step(set)), from);
  }
  private step(): (from: XNode[]) => XNode[] {
    if (this.take('.')) return (from) => from;
    if (this.take('..')) return (from) => from.map((n) => n.parent).filter((p): p is XNode => !!p);
    let axis = 'child';
    if (this.take('@')) axis = 'attribute';
    else if (this.peek()?.t === 'name' && this.toks[this.i + 1]?.v === '::') {
      axis = this.toks[this.i].v;
      this.i += 2;
    }
    const t = this.toks[this.i++];
    if (!t) throw new XPathError('Expected a node test');
    let test: (n: XNode) => boolean;
    if (t.v === '*') test = () => true;
    else if (t.t === 'name' && (t.v === 'node' || t.v === 'text') && this.peek('(')) {
      this.expect('(');
      this.expect(')');
      // Nodes here carry no text children: text() selects nothing, node() any element.
      test = () => t.v === 'node';
    } else if (t.t === 'name') test = (n) => n.name === t.v;
    else throw new XPathError(`Unexpected '${t.v}'`);
    const preds: Array<(c: Ctx) => Value> = [];
    while (this.peek('[')) preds.push(this.predicate());
    const name = t.v;
    return (from) => from.flatMap((n) => {
      let found: XNode[];
      if (axis === 'attribute') {
        found = Object.entries(n.attrs).filter(([k]) => name === '*' || k === name).map(([k, v]) => ({ name: k, attrs: { '#value': v }, children: [], parent: n }));
        return preds.reduce((set, p) => applyPredicate(set, p), found);
      }
      const candidates = axisNodes(axis, n);
      found = candidates.filter(test);
      return preds.reduce((set, p) => applyPredicate(set, p), found);
    });
  }
  private predicate(): (c: Ctx) => Value {
    this.expect('[');
    const e = this.expr();
    this.expect(']');
    return e;
  }
  private primary(): (c: Ctx) => Value {
    const t = this.toks[this.i++];
    if (t.t === 'str') return () => t.v;
    if (t.t === 'num') return () => Number(t.v);
    if (t.v === '(') {
      const e = this.expr();
      this.expect(')');
      return e;
    }
    this.expect('(');
    const args: Array<(c: Ctx) => Value> = [];
    if (!this.take(')')) {
      do args.push(this.expr()); while (this.take(','));
      this.expect(')');
    }
    const fn = FUNCTIONS[t.v];
    if (!fn) throw new XPathError(`Unknown function ${t.v}()`);
    return (c) => fn(c, args.map((a) => a(c)));
  }
}

/** The elements `expression` selects under `root` (the document element), in document order. */
export function selectXPath(expression: string, root: XNode, context: XNode = root): XNode[] {
  const parser = new Parser(tokenize(expression), root);
  const e = parser.expr();
  if (!parser.done()) throw new XPathError('Unexpected text after the expression');
  const result = e({ node: context, pos: 1, size: 1 });
  if (!isNodes(result)) throw new XPathError('The expression does not select elements');
  // Attribute nodes are not elements: a path ending in @name selects none.
  return result.filter((n) => n.name !== '#document' && (!n.parent || n.parent.children.includes(n)));
}
