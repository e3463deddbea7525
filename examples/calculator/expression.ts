/**
 * A small recursive-descent parser for arithmetic: no eval, no access to anything but numbers.
 *
 *   expression := term (('+' | '-') term)*
 *   term       := power (('*' | '/' | '%') power)*
 *   power      := unary ('^' power)?
 *   unary      := '-' unary | call
 *   call       := NAME '(' expression (',' expression)* ')' | NAME | NUMBER | '(' expression ')'
 */
const FUNCTIONS: Record<string, (...args: number[]) => number> = {
  sqrt: Math.sqrt,
  abs: Math.abs,
  round: Math.round,
  floor: Math.floor,
  ceil: Math.ceil,
  ln: Math.log,
  log10: Math.log10,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  min: Math.min,
  max: Math.max,
};
const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E };

type Token = { kind: 'number'; value: number } | { kind: 'name'; value: string } | { kind: 'symbol'; value: string };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+)|([A-Za-z_]\w*)|([-+*/%^(),]))/y;
  let index = 0;
  while (index < text.length) {
    if (/^\s*$/.test(text.slice(index))) break;
    pattern.lastIndex = index;
    const match = pattern.exec(text);
    if (match === null)
      throw new Error(`unexpected character at position ${index + 1}: "${text.slice(index).trim()[0]}"`);
    if (match[1] !== undefined) tokens.push({ kind: 'number', value: Number(match[1]) });
    else if (match[2] !== undefined) tokens.push({ kind: 'name', value: match[2] });
    else tokens.push({ kind: 'symbol', value: match[3]! });
    index = pattern.lastIndex;
  }
  return tokens;
}

export function parseExpression(text: string): number {
  const tokens = tokenize(text);
  let position = 0;
  const peek = (): Token | undefined => tokens[position];
  const take = (symbol?: string): Token => {
    const token = tokens[position];
    if (token === undefined) throw new Error('the expression ends too early');
    if (symbol !== undefined && (token.kind !== 'symbol' || token.value !== symbol))
      throw new Error(`expected "${symbol}"`);
    position += 1;
    return token;
  };
  const isSymbol = (value: string): boolean => {
    const token = peek();
    return token?.kind === 'symbol' && token.value === value;
  };

  const expression = (): number => {
    let value = term();
    while (isSymbol('+') || isSymbol('-')) value = take().value === '+' ? value + term() : value - term();
    return value;
  };
  const term = (): number => {
    let value = power();
    while (isSymbol('*') || isSymbol('/') || isSymbol('%')) {
      const op = take().value;
      const right = power();
      if ((op === '/' || op === '%') && right === 0) throw new Error('division by zero');
      value = op === '*' ? value * right : op === '/' ? value / right : value % right;
    }
    return value;
  };
  const power = (): number => {
    const base = unary();
    if (!isSymbol('^')) return base;
    take('^');
    return base ** power();
  };
  const unary = (): number => {
    if (isSymbol('-')) {
      take('-');
      return -unary();
    }
    if (isSymbol('+')) {
      take('+');
      return unary();
    }
    return call();
  };
  const call = (): number => {
    const token = take();
    if (token.kind === 'number') return token.value;
    if (token.kind === 'symbol') {
      if (token.value !== '(') throw new Error(`unexpected "${token.value}"`);
      const value = expression();
      take(')');
      return value;
    }
    const fn = FUNCTIONS[token.value];
    if (fn === undefined) {
      const constant = CONSTANTS[token.value];
      if (constant === undefined) throw new Error(`unknown name "${token.value}"`);
      return constant;
    }
    take('(');
    const args = [expression()];
    while (isSymbol(',')) {
      take(',');
      args.push(expression());
    }
    take(')');
    return fn(...args);
  };

  const value = expression();
  if (position < tokens.length) throw new Error(`unexpected "${String(tokens[position]!.value)}" after the expression`);
  return value;
}
