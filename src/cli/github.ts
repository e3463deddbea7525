/**
 * GitHub Actions, detected from `GITHUB_ACTIONS=true`: workflow commands (`::error file=…::…`)
 * that put problems on the lines they are about, a Markdown summary appended to
 * `$GITHUB_STEP_SUMMARY`, and step outputs written to `$GITHUB_OUTPUT`. The formatting is pure;
 * the two file writers are the only IO. See docs/ci.md.
 */
import { appendFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';

type Env = Record<string, string | undefined>;

export function isGithubActions(env: Env): boolean {
  return env.GITHUB_ACTIONS === 'true';
}

export interface Location {
  file: string;
  line?: number;
  col?: number;
}

/** `server.yaml:12:5` (or `file:12`) → its parts; undefined for anything else. */
export function parseWhere(where: string | undefined): Location | undefined {
  if (where === undefined) return undefined;
  const match = /^(.+?):(\d+)(?::(\d+))?$/.exec(where);
  if (match === null) return undefined;
  return { file: match[1]!, line: Number(match[2]), ...(match[3] === undefined ? {} : { col: Number(match[3]) }) };
}

/** The path GitHub wants: relative to the workspace (the repository), where the file is inside it. */
export function workspacePath(file: string, cwd: string, workspace: string | undefined): string {
  if (workspace === undefined || workspace === '') return file;
  const rel = relative(workspace, resolve(cwd, file));
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? file : rel.split('\\').join('/');
}

function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** One workflow command line: `::error file=a.yaml,line=3,col=5,title=…::message`. */
export function workflowCommand(
  level: 'error' | 'warning' | 'notice',
  message: string,
  at?: Location & { title?: string },
): string {
  const properties: string[] = [];
  if (at !== undefined) {
    properties.push(`file=${escapeProperty(at.file)}`);
    if (at.line !== undefined) properties.push(`line=${at.line}`);
    if (at.col !== undefined) properties.push(`col=${at.col}`);
    if (at.title !== undefined) properties.push(`title=${escapeProperty(at.title)}`);
  }
  return `::${level}${properties.length === 0 ? '' : ` ${properties.join(',')}`}::${escapeData(message)}`;
}

/** `name=value` lines for $GITHUB_OUTPUT; a value with a line break uses the heredoc form (its delimiter from the Web Crypto global, which loads node:crypto only when called). */
export function formatOutputs(
  values: Record<string, string | undefined>,
  delimiter = `mcpctl_${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex')}`,
): string {
  let text = '';
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue;
    text += /[\r\n]/.test(value) ? `${name}<<${delimiter}\n${value}\n${delimiter}\n` : `${name}=${value}\n`;
  }
  return text;
}

/** Appends Markdown to the job summary. Returns a reason when it could not. */
export async function appendSummary(env: Env, markdown: string): Promise<string | undefined> {
  return appendTo(env.GITHUB_STEP_SUMMARY, 'GITHUB_STEP_SUMMARY', `${markdown.trimEnd()}\n\n`);
}

/** Writes step outputs. Returns a reason when it could not. */
export async function writeOutputs(env: Env, values: Record<string, string | undefined>): Promise<string | undefined> {
  return appendTo(env.GITHUB_OUTPUT, 'GITHUB_OUTPUT', formatOutputs(values));
}

async function appendTo(file: string | undefined, variable: string, text: string): Promise<string | undefined> {
  if (file === undefined || file === '') return `${variable} is not set`;
  try {
    await appendFile(file, text);
    return undefined;
  } catch (error) {
    return `cannot write ${variable} (${file}): ${(error as Error).message}`;
  }
}

/**
 * In GitHub Actions, appends a summary and writes outputs; a file that cannot be written is a
 * warning, not a failure of the command (its result stands).
 */
export async function publishToGithub(
  io: { env: Env },
  warn: (text: string) => void,
  what: { summary?: string | undefined; outputs?: Record<string, string | undefined> | undefined },
): Promise<void> {
  if (!isGithubActions(io.env)) return;
  const problems = [
    what.summary === undefined ? undefined : await appendSummary(io.env, what.summary),
    what.outputs === undefined ? undefined : await writeOutputs(io.env, what.outputs),
  ];
  for (const problem of problems) if (problem !== undefined) warn(problem);
}
