/**
 * Element lookup of the UiAutomator2 server: `id` (resource-id, the app's package prefixed when the selector has
 * none), `accessibility id` (content-desc), `class name`, `xpath` over the page source and `-android uiautomator`
 * (UiSelector chains: text, description, className, resourceId, packageName and their Contains/StartsWith/Matches
 * forms, clickable, focused, enabled, index, instance, childSelector; several selectors separated by `;`).
 */
import { XPathError, selectXPath } from '../../util/mini-xpath';
import { invalidArgument, invalidSelector } from '../../util/json-wire';
import { backtracks } from '../shell/toybox-text';
import type { Snapshot, TreeNode } from './tree';

type Test = (n: TreeNode, indexInParent: number) => boolean;

interface Selector {
  tests: Test[];
  instance?: number;
  child?: Selector;
}

const STRING_METHODS: Record<string, (n: TreeNode) => string> = {
  text: (n) => n.ui.text,
  description: (n) => n.ui.contentDesc,
  className: (n) => n.ui.className,
  resourceId: (n) => n.ui.resourceId,
  packageName: (n) => n.ui.packageName,
};
const BOOL_METHODS: Record<string, (n: TreeNode) => boolean> = {
  clickable: (n) => n.ui.clickable,
  focused: (n) => n.ui.focused,
  enabled: () => true,
  checked: () => false,
  checkable: () => false,
  selected: () => false,
  scrollable: () => false,
  longClickable: (n) => n.ui.clickable,
  focusable: (n) => n.ui.clickable,
};

/** Reads `new UiSelector().text("A").instance(1)` (the `new UiSelector()` prefix is optional). */
function parseUiSelector(source: string): Selector {
  let rest = source.trim().replace(/^new\s+UiSelector\s*\(\s*\)\s*\.?/, '');
  const selector: Selector = { tests: [] };
  while (rest.length) {
    const m = /^\.?\s*([A-Za-z]+)\s*\(/.exec(rest);
    if (!m) throw invalidSelector(`Could not parse UiSelector argument: '${source}'`);
    const method = m[1];
    rest = rest.slice(m[0].length);
    // The argument: a string literal, a nested selector, a number or a boolean, up to the matching ')'.
    let depth = 1;
    let i = 0;
    let quote: string | null = null;
    for (; i < rest.length && depth > 0; i++) {
      const c = rest[i];
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = null;
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '(') depth++;
      else if (c === ')') depth--;
    }
    if (depth) throw invalidSelector(`Unbalanced parentheses in UiSelector: '${source}'`);
    const arg = rest.slice(0, i - 1).trim();
    rest = rest.slice(i).trim();
    addMethod(selector, method, arg, source);
  }
  return selector;
}

function stringArg(arg: string, source: string): string {
  const m = /^"((?:[^"\\]|\\.)*)"$/.exec(arg);
  if (!m) throw invalidSelector(`UiSelector method needs a string argument: '${source}'`);
  return m[1].replace(/\\(.)/g, '$1');
}

function addMethod(s: Selector, method: string, arg: string, source: string): void {
  const base = method.replace(/(Contains|StartsWith|Matches)$/, '');
  const read = STRING_METHODS[base];
  if (read) {
    const value = stringArg(arg, source);
    if (method.endsWith('Contains')) s.tests.push((n) => read(n).includes(value));
    else if (method.endsWith('StartsWith')) s.tests.push((n) => read(n).startsWith(value));
    else if (method.endsWith('Matches')) {
      let re: RegExp;
      try {
        if (backtracks(value)) throw new Error('pattern too complex');
        re = new RegExp(`^(?:${value})$`);
      } catch {
        throw invalidSelector(`Invalid regular expression in UiSelector: '${value}'`);
      }
      s.tests.push((n) => re.test(read(n)));
    } else s.tests.push((n) => read(n) === value);
    return;
  }
  const flag = BOOL_METHODS[method];
  if (flag) {
    const want = arg === '' || arg === 'true';
    s.tests.push((n) => flag(n) === want);
    return;
  }
  if (method === 'index' || method === 'instance') {
    if (!/^\d+$/.test(arg)) throw invalidSelector(`UiSelector.${method} needs a number: '${source}'`);
    if (method === 'index') s.tests.push((_n, i) => i === Number(arg));
    else s.instance = Number(arg);
    return;
  }
  if (method === 'childSelector') {
    s.child = parseUiSelector(arg);
    return;
  }
  throw invalidSelector(`UiSelector method '${method}' is not supported`);
}

function matchSelector(s: Selector, candidates: TreeNode[], snap: Snapshot): TreeNode[] {
  let found = candidates.filter((n) => s.tests.every((t) => t(n, n.path[n.path.length - 1] ?? 0)));
  if (s.instance !== undefined) found = found.slice(s.instance, s.instance + 1);
  if (!s.child) return found;
  const child = s.child;
  return [...new Set(found.flatMap((parent) => matchSelector(child, descendantsOf(parent, snap), snap)))];
}

function descendantsOf(parent: TreeNode, snap: Snapshot): TreeNode[] {
  const prefix = parent.path;
  return snap.nodes.filter((n) => n.path.length > prefix.length && prefix.every((v, i) => n.path[i] === v));
}

/** The nodes a locator selects in a snapshot, under `context` when given (its descendants), in document order. */
export function findNodes(snap: Snapshot, strategy: string, selector: string, context: TreeNode | undefined, appPackage: string | null): TreeNode[] {
  const scope = context ? descendantsOf(context, snap) : snap.nodes;
  switch (strategy) {
    case 'id':
    case 'resource-id': {
      const full = selector.includes(':id/') || !appPackage ? selector : `${appPackage}:id/${selector}`;
      return scope.filter((n) => n.ui.resourceId === selector || n.ui.resourceId === full || (!selector.includes(':') && n.ui.resourceId.endsWith(`:id/${selector}`)));
    }
    case 'accessibility id':
      return scope.filter((n) => n.ui.contentDesc === selector);
    case 'class name':
      return scope.filter((n) => n.ui.className === selector);
    case 'text':
      return scope.filter((n) => n.ui.text === selector);
    case 'xpath': {
      let selected;
      try {
        selected = selectXPath(selector, snap.root, context?.x ?? snap.root);
      } catch (e) {
        if (e instanceof XPathError) throw invalidSelector(`Unable to compile '${selector}': ${e.message}`);
        throw e;
      }
      const inScope = new Set(scope);
      return selected.map((x) => snap.byX.get(x)).filter((n): n is TreeNode => !!n && inScope.has(n));
    }
    case '-android uiautomator': {
      const parts = selector.split(/;\s*(?=new\s+UiSelector|[A-Za-z]+\s*\()/).filter((p) => p.trim());
      return [...new Set(parts.flatMap((p) => matchSelector(parseUiSelector(p), scope, snap)))];
    }
    default:
      throw invalidArgument(`Locator strategy '${strategy}' is not supported`);
  }
}
