/**
 * The one module that writes to the terminal. It knows whether the streams are TTYs, whether
 * `--json`, `--quiet`, `--no-color`, `NO_COLOR` or `CI` are set, and renders accordingly:
 *
 * - results: one JSON document on stdout with `--json`, otherwise the command's human rendering;
 * - progress: an ora spinner on an interactive terminal, plain timestamped lines on stderr
 *   elsewhere (CI, pipes), nothing with `--quiet`;
 * - notices, warnings and errors: stderr, so stdout stays clean for pipes;
 * - control characters: everything written passes terminalSafe (render/service-text.ts), so only
 *   the CLI's own colours reach the terminal as escape sequences; JSON escapes them all;
 * - long lines of prose (messages, hints, notices, next steps, field values) break at words to the
 *   terminal's width, continuation lines indented under the text; only on a terminal outside CI, so
 *   logs and pipes keep each message on one line (render/wrap.ts).
 *
 * See docs/output.md for how success, warnings, errors and next steps look.
 */
import { Chalk, type ChalkInstance } from 'chalk';
import type { Writable } from 'node:stream';
import type { Problem } from '../shared/errors.js';
import { parseWhere, workflowCommand, workspacePath } from './github.js';
import { formatSeconds, formatTime } from './render/format.js';
import { jsonText, terminalSafe } from './render/service-text.js';
import { visibleLength, wrapText } from './render/wrap.js';

export { visibleLength } from './render/wrap.js';

export interface OutputStreams {
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean; columns?: number };
}

export interface OutputOptions extends OutputStreams {
  json: boolean;
  quiet: boolean;
  /** false with --no-color or NO_COLOR */
  color: boolean;
  /** CI=true or similar: never animate, never prompt */
  ci: boolean;
  /** in GitHub Actions: where paths are relative to, for workflow commands */
  github?: { cwd: string; workspace?: string | undefined } | undefined;
}

export interface Progress {
  /** change the text of the running step */
  update(text: string): void;
  succeed(text?: string): void;
  fail(text?: string): void;
  warn(text?: string): void;
  /** end without a final line */
  stop(): void;
}

/** What a command's human renderer writes with. */
export interface Printer {
  readonly style: ChalkInstance;
  /** a line as given: a table's, a chart's, anything laid out already */
  line(text?: string): void;
  /**
   * a line of prose, broken at words to a terminal's width and continued under its text (after its
   * indentation and a mark or label such as `✖ ` or `hint: `), or `indent` columns in
   */
  text(text: string, indent?: number): void;
  /** a heading line with a green check */
  success(text: string): void;
  /** a warning line, on stdout with the result */
  warn(text: string): void;
  /** aligned `key  value` rows; undefined values are skipped */
  fields(rows: Array<[string, string | number | undefined | null]>): void;
  /** a plain table with a header row */
  table(headers: string[], rows: Array<Array<string | number>>): void;
  /** a next step, dimmed with an arrow */
  next(text: string): void;
}

export class Output {
  readonly json: boolean;
  readonly quiet: boolean;
  readonly ci: boolean;
  /** colour and style for stdout */
  readonly style: ChalkInstance;
  /** colour and style for stderr */
  readonly errStyle: ChalkInstance;
  /** where text goes: stdout and stderr, each written only through terminalSafe */
  private readonly streams: { stdout: Sink; stderr: Sink };
  /** the widths prose is wrapped to: a terminal's columns, undefined where lines stay whole */
  private readonly widths: { stdout: number | undefined; stderr: number | undefined };
  private readonly github: OutputOptions['github'];
  /** the streams as given: for the spinner, which draws with cursor sequences of its own */
  private readonly rawStreams: OutputStreams;
  private resultWritten = false;

  constructor(options: OutputOptions) {
    this.json = options.json;
    this.quiet = options.quiet;
    this.ci = options.ci;
    this.github = options.github;
    this.style = new Chalk({ level: options.color && options.stdout.isTTY === true ? 1 : 0 });
    this.errStyle = new Chalk({ level: options.color && options.stderr.isTTY === true ? 1 : 0 });
    this.rawStreams = { stdout: options.stdout, stderr: options.stderr };
    this.streams = {
      stdout: safeSink(options.stdout, this.style.level > 0),
      stderr: safeSink(options.stderr, this.errStyle.level > 0),
    };
    this.widths = { stdout: wrapWidth(options.stdout, options.ci), stderr: wrapWidth(options.stderr, options.ci) };
  }

  /** True when a person is at the terminal: prompts and spinners are allowed. */
  get interactive(): boolean {
    return !this.ci && this.rawStreams.stderr.isTTY === true && this.rawStreams.stdout.isTTY === true;
  }

  /**
   * A spinner redraws its line, which needs the terminal's width: a terminal that reports 0 columns
   * (`stty size` → `0 0`, some containers and CI pseudo-terminals) gets plain lines instead, as a
   * spinner would count every line as infinitely many and erase them forever.
   */
  get canAnimate(): boolean {
    const columns = this.rawStreams.stderr.columns;
    return this.interactive && (columns === undefined || (Number.isFinite(columns) && columns > 0));
  }

  /**
   * Write the command's result: with --json exactly one JSON document on stdout; with --quiet the
   * lines `quiet` gives (the one value the command answers, see docs/output.md), or nothing;
   * otherwise the human rendering. `always` shows the human rendering even with --quiet.
   */
  result(
    data: unknown,
    human: (p: Printer) => void,
    options: { always?: boolean; quiet?: () => string | readonly string[] | undefined } = {},
  ): void {
    if (this.json) {
      this.writeJson(data);
      return;
    }
    if (this.quiet && options.quiet !== undefined) {
      const lines = options.quiet();
      for (const line of typeof lines === 'string' ? [lines] : (lines ?? [])) this.streams.stdout.write(`${line}\n`);
      return;
    }
    if (this.quiet && options.always !== true) return;
    human(this.printer(this.streams.stdout, this.style, this.widths.stdout));
  }

  /** The JSON document on stdout. Only one is ever written. */
  writeJson(data: unknown): void {
    if (this.resultWritten) return;
    this.resultWritten = true;
    this.streams.stdout.write(`${jsonText(data, 2)}\n`);
  }

  /** One JSON line on stdout (a streamed log line with --json): NDJSON, every control character escaped. */
  jsonLine(data: unknown): void {
    this.streams.stdout.write(`${jsonText(data)}\n`);
  }

  /** Raw text on stdout (for example a streamed log line); control characters but the CLI's colours shown as text. */
  raw(text: string): void {
    this.streams.stdout.write(text);
  }

  /** A short notice on stderr (never stdout, never in --json output). */
  notice(text: string): void {
    if (this.quiet) return;
    this.streams.stderr.write(`${this.errStyle.dim(wrapText(text, this.widths.stderr))}\n`);
  }

  warn(text: string): void {
    this.streams.stderr.write(`${wrapText(`${this.errStyle.yellow('warning:')} ${text}`, this.widths.stderr)}\n`);
  }

  /** A failure: message, where, request id and next step, on stderr. */
  error(message: string, details: { problems?: Problem[]; hint?: string; requestId?: string } = {}): void {
    const s = this.errStyle;
    const width = this.widths.stderr;
    const lines = [wrapText(`${s.red.bold('error:')} ${message}`, width)];
    for (const problem of details.problems ?? []) {
      const where = problem.where === undefined ? '' : `${problem.where}  `;
      const path = problem.path === undefined || problem.path === '' ? '' : `${s.cyan(problem.path)}  `;
      // continued under the problem's place, a little deeper than the next problem starts
      lines.push(wrapText(`  ${where}${path}${problem.message}`, width, 4));
    }
    if (details.requestId !== undefined) lines.push(s.dim(`  request id: ${details.requestId}`));
    if (details.hint !== undefined) lines.push(wrapText(`${s.dim('→')} ${details.hint}`, width));
    this.streams.stderr.write(`${lines.join('\n')}\n`);
  }

  /** True in GitHub Actions: annotations are written, and summaries and outputs are wanted. */
  get inGithubActions(): boolean {
    return this.github !== undefined;
  }

  /**
   * A GitHub Actions workflow command on stdout, so the problem shows on the line it is about
   * (`where` is `file:line:column`). Only in GitHub Actions, and never with --json.
   */
  annotate(level: 'error' | 'warning' | 'notice', message: string, where?: string, title?: string): void {
    if (this.github === undefined || this.json) return;
    const at = parseWhere(where);
    const located =
      at === undefined
        ? undefined
        : {
            ...at,
            file: workspacePath(at.file, this.github.cwd, this.github.workspace),
            ...(title === undefined ? {} : { title }),
          };
    this.streams.stdout.write(`${workflowCommand(level, message, located)}\n`);
  }

  /** Raw text on stderr (a bug report's stack trace). */
  stderr(text: string): void {
    this.streams.stderr.write(text);
  }

  /**
   * Progress for a long step. A spinner on an interactive terminal with a width (loaded lazily),
   * timestamped lines on stderr otherwise, nothing with --quiet.
   */
  async progress(text: string): Promise<Progress> {
    if (this.quiet) return silentProgress;
    if (this.canAnimate) {
      const { default: ora } = await import('ora');
      // discardStdin would put the terminal in raw mode without reading it: Ctrl-C would then be
      // a byte nobody reads instead of SIGINT, and a deploy wait could not be interrupted.
      const styled = this.errStyle.level > 0;
      const safe = (t: string | undefined) => (t === undefined ? undefined : terminalSafe(t, styled));
      const spinner = ora({
        text: safe(text),
        stream: this.rawStreams.stderr,
        color: 'cyan',
        discardStdin: false,
      }).start();
      // the time so far after the text (`deploying weather… 4 s`), from the first whole second
      const started = performance.now();
      const ticker = setInterval(() => {
        spinner.suffixText = formatSeconds(Math.floor((performance.now() - started) / 1000)) ?? '';
      }, 1000);
      ticker.unref();
      const end = (finish: () => void) => {
        clearInterval(ticker);
        spinner.suffixText = '';
        finish();
      };
      return {
        update: (t) => {
          spinner.text = safe(t) ?? '';
        },
        succeed: (t) => end(() => spinner.succeed(safe(t))),
        fail: (t) => end(() => spinner.fail(safe(t))),
        warn: (t) => end(() => spinner.warn(safe(t))),
        stop: () => end(() => spinner.stop()),
      };
    }
    return new LineProgress(this.streams.stderr, text);
  }

  private printer(stream: Sink, style: ChalkInstance, columns: number | undefined): Printer {
    const write = (text: string) => stream.write(`${text}\n`);
    // prose wraps under its text; `line` is written as given, as tables and charts are laid out already
    const wrapped = (text: string, indent?: number) => write(wrapText(text, columns, indent));
    return {
      style,
      line: (text = '') => write(text),
      text: (text, indent) => wrapped(text, indent),
      success: (text) => wrapped(`${style.green('✔')} ${text}`),
      warn: (text) => wrapped(`${style.yellow('!')} ${text}`),
      // a next step that is a command stays one line, to be pasted whole
      next: (text) => (text.startsWith('mcpctl ') ? write : wrapped)(`${style.dim('→')} ${text}`),
      fields: (rows) => {
        const shown = rows.filter((row): row is [string, string | number] => row[1] !== undefined && row[1] !== null);
        const width = Math.max(0, ...shown.map(([key]) => key.length));
        for (const [key, value] of shown) wrapped(`  ${style.dim(key.padEnd(width))}  ${value}`, width + 4);
      },
      table: (headers, rows) => {
        const cells = [headers, ...rows.map((row) => row.map(String))];
        const widths = headers.map((_, i) => Math.max(...cells.map((row) => visibleLength(row[i] ?? ''))));
        const format = (row: string[]) =>
          row
            .map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - visibleLength(cell))))
            .join('  ')
            .trimEnd();
        write(style.bold(format(headers)));
        for (const row of cells.slice(1)) write(format(row));
      },
    };
  }
}

/**
 * The width to wrap prose to: a terminal's columns. Outside a terminal, or in CI (whose logs are
 * read in a browser as wide as it is), every message stays one line, for grep and for the reader's
 * own wrapping; a terminal that reports no width is left to wrap as it does.
 */
function wrapWidth(stream: OutputStreams['stdout'], ci: boolean): number | undefined {
  const { columns, isTTY } = stream;
  return isTTY === true && !ci && columns !== undefined && Number.isFinite(columns) && columns > 0
    ? columns
    : undefined;
}

/** Where the output writes text. */
interface Sink {
  write(text: string): void;
}

/** A stream whose every write passes terminalSafe; `styled`: colour sequences are the CLI's own. */
function safeSink(stream: Writable, styled: boolean): Sink {
  return { write: (text) => void stream.write(terminalSafe(text, styled)) };
}

const silentProgress: Progress = { update() {}, succeed() {}, fail() {}, warn() {}, stop() {} };

/** Progress for logs and CI: a timestamped line per change, no frames, no repeats. */
class LineProgress implements Progress {
  private last = '';
  constructor(
    private readonly stream: Sink,
    text: string,
  ) {
    this.emit(text);
  }
  private emit(text: string, mark = ''): void {
    if (text === this.last && mark === '') return;
    this.last = text;
    // a progress line is written as it happens: the local time of day, in the form every output uses
    this.stream.write(`[${formatTime(new Date().toISOString(), { date: false })}] ${mark}${text}\n`);
  }
  update(text: string): void {
    this.emit(text);
  }
  succeed(text?: string): void {
    this.emit(text ?? this.last, 'ok: ');
  }
  fail(text?: string): void {
    this.emit(text ?? this.last, 'failed: ');
  }
  warn(text?: string): void {
    this.emit(text ?? this.last, 'warning: ');
  }
  stop(): void {}
}
