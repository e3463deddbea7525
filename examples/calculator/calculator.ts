/**
 * The calculator's tools. Each exported function is a tool of the same name: it receives the
 * validated arguments and returns a value (an object becomes structured content).
 */
import { parseExpression } from './expression.ts';

export function evaluate({ expression }: { expression: string }): { expression: string; result: number } {
  const result = parseExpression(expression);
  if (!Number.isFinite(result)) throw new Error(`${expression} has no finite value`);
  return { expression, result: Number(result.toPrecision(15)) };
}

export function statistics({ numbers }: { numbers: number[] }) {
  const sorted = [...numbers].sort((a, b) => a - b);
  const count = sorted.length;
  const sum = sorted.reduce((total, n) => total + n, 0);
  const mean = sum / count;
  const middle = Math.floor(count / 2);
  const median = count % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  const variance = sorted.reduce((total, n) => total + (n - mean) ** 2, 0) / count;
  return { count, sum, mean, median, min: sorted[0]!, max: sorted[count - 1]!, stdev: Math.sqrt(variance) };
}

const LINEAR: Record<string, { kind: string; factor: number }> = {
  m: { kind: 'length', factor: 1 },
  km: { kind: 'length', factor: 1000 },
  mi: { kind: 'length', factor: 1609.344 },
  ft: { kind: 'length', factor: 0.3048 },
  in: { kind: 'length', factor: 0.0254 },
  kg: { kind: 'mass', factor: 1 },
  g: { kind: 'mass', factor: 0.001 },
  lb: { kind: 'mass', factor: 0.45359237 },
  oz: { kind: 'mass', factor: 0.028349523125 },
};

function toKelvin(value: number, unit: string): number {
  if (unit === 'c') return value + 273.15;
  if (unit === 'f') return ((value - 32) * 5) / 9 + 273.15;
  return value;
}

function fromKelvin(value: number, unit: string): number {
  if (unit === 'c') return value - 273.15;
  if (unit === 'f') return ((value - 273.15) * 9) / 5 + 32;
  return value;
}

export function convert({ value, from, to }: { value: number; from: string; to: string }): string {
  const temperature = ['c', 'f', 'k'];
  let result: number;
  if (temperature.includes(from) && temperature.includes(to)) {
    result = fromKelvin(toKelvin(value, from), to);
  } else {
    const a = LINEAR[from];
    const b = LINEAR[to];
    if (a === undefined || b === undefined || a.kind !== b.kind)
      throw new Error(`cannot convert ${from} to ${to}: they measure different things`);
    result = (value * a.factor) / b.factor;
  }
  return `${value} ${from} = ${Number(result.toPrecision(12))} ${to}`;
}
