/** Reading JSON that a tool may or may not have written as its text. Pure: no IO. */

/** The object or array a text holds as JSON; undefined for anything else (plain text, a bare value, bad JSON). */
export function jsonInText(text: unknown): unknown {
  if (typeof text !== 'string') return undefined;
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}
