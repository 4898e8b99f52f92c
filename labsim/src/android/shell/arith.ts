/** `$(( ... ))`: integer arithmetic with + - * / % ( ), comparisons, ! && || and variables. */

export class ArithmeticError extends Error {}

const TOKEN = /\s*(\d+|[A-Za-z_][A-Za-z0-9_]*|<=|>=|==|!=|&&|\|\||[-+*/%()<>!])/y;

export function evaluateArithmetic(expression: string, variable: (name: string) => string): number {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expression.length) {
    const start = TOKEN.lastIndex;
    const m = TOKEN.exec(expression);
    if (!m) {
      if (expression.slice(start).trim() === '') break;
      throw new ArithmeticError(`${expression}: syntax error`);
    }
    tokens.push(m[1]);
  }
  let i = 0;
  const peek = () => tokens[i];
  const fail = (): never => {
    throw new ArithmeticError(`${expression}: syntax error`);
  };
  const binary = (next: () => number, ops: Record<string, (a: number, b: number) => number>) => (): number => {
    let value = next();
    while (peek() !== undefined && ops[peek()]) value = ops[tokens[i++]](value, next()) | 0;
    return value;
  };
  const primary = (): number => {
    const t = tokens[i++];
    if (t === undefined) return fail();
    if (t === '(') {
      const v = or();
      if (tokens[i++] !== ')') fail();
      return v;
    }
    if (t === '-') return -primary() | 0;
    if (t === '+') return primary();
    if (t === '!') return primary() === 0 ? 1 : 0;
    if (/^\d/.test(t)) return Number(t) | 0;
    if (/^[A-Za-z_]/.test(t)) {
      const v = variable(t).trim();
      return v === '' ? 0 : /^-?\d+$/.test(v) ? Number(v) | 0 : fail();
    }
    return fail();
  };
  const divide = (op: (a: number, b: number) => number) => (a: number, b: number) => {
    if (b === 0) throw new ArithmeticError(`${expression}: divide by zero`);
    return op(a, b);
  };
  const product = binary(primary, { '*': (a, b) => Math.imul(a, b), '/': divide((a, b) => Math.trunc(a / b)), '%': divide((a, b) => a % b) });
  const sum = binary(product, { '+': (a, b) => a + b, '-': (a, b) => a - b });
  const compare = binary(sum, { '<': (a, b) => +(a < b), '>': (a, b) => +(a > b), '<=': (a, b) => +(a <= b), '>=': (a, b) => +(a >= b) });
  const equal = binary(compare, { '==': (a, b) => +(a === b), '!=': (a, b) => +(a !== b) });
  const and = binary(equal, { '&&': (a, b) => +(a !== 0 && b !== 0) });
  const or: () => number = binary(and, { '||': (a, b) => +(a !== 0 || b !== 0) });
  if (tokens.length === 0) return 0;
  const value = or();
  if (i < tokens.length) fail();
  return value;
}
