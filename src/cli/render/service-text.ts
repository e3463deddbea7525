/**
 * Text that came from a service (a tool name a client sent, a log line an instance wrote, an
 * error message of an API), made safe for a terminal: control characters are shown as visible
 * escapes (`\x1b[2J`, `\r`, `\u202e`) so they cannot clear the screen, retitle the window, move
 * the cursor, hide text or forge lines. Pure.
 */

/* eslint-disable no-control-regex -- matching control characters is the point */
/** C0 controls but tab, DEL, C1 controls, and the bidirectional overrides and isolates */
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** the same, keeping line breaks */
const CONTROL_BUT_NEWLINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** what JSON.stringify leaves as it is although a terminal acts on it */
const JSON_UNSAFE = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** one control character that is not a line break or a tab */
const ONE_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
/** a colour or style sequence (SGR), the only escape sequence the CLI writes itself */
const STYLE = /\u001b\[[0-9;]*m/y;
/* eslint-enable no-control-regex */

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\0': '\\0' };

function visible(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** One line of service text for a terminal: every control character, line breaks too, made visible. */
export function serviceText(text: string): string {
  return text.replace(CONTROL, visible);
}

/** Several lines of service text (a tool's output): as serviceText, keeping its line breaks. */
export function serviceLines(text: string): string {
  return text.replace(CONTROL_BUT_NEWLINE, visible);
}

/** JSON text whose every control character is escaped (JSON.stringify escapes only U+0000–U+001F). */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    JSON_UNSAFE,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * The last line of defence before the terminal, for whole lines the CLI composed: control
 * characters made visible except line breaks, tabs and, when `styled`, the colour sequences the
 * CLI adds itself. Service text should already have gone through serviceText, which also shows
 * colour sequences a service sent.
 */
export function terminalSafe(text: string, styled: boolean): string {
  if (!ONE_CONTROL.test(text)) return text;
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (char === '\u001b' && styled) {
      STYLE.lastIndex = i;
      const match = STYLE.exec(text);
      if (match !== null) {
        out += match[0];
        i += match[0].length - 1;
        continue;
      }
    }
    out += ONE_CONTROL.test(char) ? visible(char) : char;
  }
  return out;
}

/** A service's answer for human rendering: every string in it, however deep, through serviceText. */
export function serviceData<T>(value: T): T {
  if (typeof value === 'string') return serviceText(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => serviceData(item)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [serviceText(key), serviceData(item)])) as T;
  }
  return value;
}
