/**
 * Splits a stream of NDJSON text into lines as the chunks arrive: a chunk may end in the middle of a
 * line (kept for the next one) and empty lines are the stream's keep-alives. Pure, so it is tested
 * without a socket.
 */
export class NdjsonSplitter {
  private rest = '';

  /** The complete, non-empty lines this chunk finishes. */
  push(chunk: string): string[] {
    const text = this.rest + chunk;
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    return lines.map((line) => line.replace(/\r$/, '')).filter((line) => line.trim() !== '');
  }

  /** What is left when the stream ends: a last line without a line break. */
  end(): string[] {
    const last = this.rest.trim();
    this.rest = '';
    return last === '' ? [] : [last];
  }
}

/** A parsed line, or undefined for one that is not a JSON object (a broken line is skipped, not fatal). */
export function parseJsonLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
