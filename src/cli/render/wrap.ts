/**
 * Long lines broken at words for a terminal, with the lines after the first indented under the
 * text: after a mark such as `✔ `, `→ ` or `! `, after a label such as `error: ` or `hint: `, or
 * under the line's own indentation. A word longer than the width (a URL, a path) is never cut: it
 * keeps a line of its own and the terminal shows it whole; a command between backticks counts as
 * one word, so it can be pasted as it is. Width is counted in visible characters, colour sequences
 * left out. Pure.
 */

// eslint-disable-next-line no-control-regex -- matching terminal escape codes is the point
const ANSI = /\u001b\[[0-9;]*m/g;

/** The length of text as the terminal shows it: colour sequences take no room. */
export function visibleLength(text: string): number {
  return text.replace(ANSI, '').length;
}

/**
 * What a wrapped line's continuation lines start under: its indentation, then a one-character mark
 * and a space (`✖ `, `→ `, `• `, `- `), or a one-word label and a space (`error: `, `hint: `).
 */
const HANGING = /^(\s*)(?:[^\p{L}\p{N}\s]\s+|[a-z]+:\s+)?/u;

/** The least room continuation lines keep for text after their indentation. */
const MIN_TEXT_WIDTH = 10;

/**
 * `text` with every line longer than `width` broken at spaces. `indent` sets the continuation
 * lines' indentation for every line; without it each line hangs under its own text (see HANGING).
 * Without a width (not a terminal) the text stays as it is.
 */
export function wrapText(text: string, width: number | undefined, indent?: number): string {
  if (width === undefined || !Number.isFinite(width) || width <= 0) return text;
  return text
    .split('\n')
    .map((line) => wrapLine(line, width, indent ?? visibleLength(HANGING.exec(line.replace(ANSI, ''))?.[0] ?? '')))
    .join('\n');
}

function wrapLine(line: string, width: number, hang: number): string {
  if (visibleLength(line) <= width) return line;
  // too deep an indentation for the width: the continuation starts at the margin instead
  const indent = ' '.repeat(width - hang < MIN_TEXT_WIDTH ? 0 : hang);
  // spaces, or a word: a `quoted command` with its spaces is one
  const tokens = line.match(/\s+|(?:[^\s`]*`[^`]*`)+[^\s`]*|\S+/g) ?? [];
  const lines: string[] = [];
  let current = '';
  let length = 0;
  let pending = '';
  for (const token of tokens) {
    if (/^\s/.test(token)) {
      // leading spaces are the line's own indentation; spaces between words wait for the next word
      if (current === '') current = token;
      else pending = token;
      if (lines.length === 0 && length === 0) length = token.length;
      continue;
    }
    const size = visibleLength(token);
    if (length > indent.length && length + pending.length + size > width) {
      lines.push(current);
      current = indent + token;
      length = indent.length + size;
    } else {
      current += pending + token;
      length += pending.length + size;
    }
    pending = '';
  }
  lines.push(current);
  return lines.join('\n');
}
