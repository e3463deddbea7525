/**
 * `mcpctl init [dir]`: scaffolds a definition from one of the templates of the package. Asks for
 * the server name, template and first tool on a terminal; elsewhere (CI, pipes, `--yes`) takes
 * the flags or the defaults. Never overwrites a file without `--force`, and checks every file
 * before writing any.
 */
import { lstat, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { UserError } from '../../shared/errors.js';
import type { CommandContext } from '../context.js';
import { askChoice, askText, canPrompt } from '../prompt.js';
import { plural, shellQuote } from '../render/format.js';
import { displayPath } from '../../shared/paths.js';
import { packageRoot } from '../../shared/package-root.js';
import type { InitOptions } from '../specs/definitions.js';

export const TEMPLATE_NAMES = ['basic', 'advanced', 'custom'] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

export interface InitResult {
  /** absolute path of the folder written to */
  dir: string;
  /** files written, relative to `dir`, with / separators */
  files: string[];
  template: TemplateName;
  name: string;
}

// Kept in step with the YAML patterns of src/definition/schema-builders.ts, which this command does not load.
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface TemplateInfo {
  description: string;
  defaultTool: string;
  /** tool names and function names the template already uses besides the first tool */
  taken: string[];
}

const TEMPLATES: Record<TemplateName, TemplateInfo> = {
  basic: {
    description: 'tools with fixed or templated answers, a file resource, a prompt',
    defaultTool: 'greet',
    taken: ['echo'],
  },
  advanced: {
    description: 'programs and HTTP APIs as tools, URI templates, per-user resources, OAuth, deploy defaults',
    defaultTool: 'text_stats',
    taken: ['current_weather', 'whoami'],
  },
  custom: {
    description: 'tools written as TypeScript functions of your own',
    defaultTool: 'slugify',
    taken: ['roll_dice', 'my_tasks', 'myTasks'],
  },
};

const PLACEHOLDERS = ['__SERVER_NAME__', '__TOOL_NAME__', '__TOOL_EXPORT__', '__SCHEMA_PATH__'] as const;

/** The package's own folders (templates/, schema/). */
function packagePath(...parts: string[]): string {
  return join(packageRoot(), ...parts);
}

/** The JSON Schema file of the installed package, for the editor comment of a new definition. */
export function schemaFilePath(): string {
  return packagePath('schema', 'mcpctl.schema.json');
}

/**
 * The schema as the new definition's comment names it: relative to the definition's folder, so a
 * project that installs mcpctl in its node_modules can be cloned anywhere and still find it (an
 * absolute path is this machine's alone). Forward slashes on every system, as editors read them.
 */
export function schemaReference(definitionDir: string, schemaFile = schemaFilePath()): string {
  return relative(definitionDir, schemaFile).split(sep).join('/');
}

/** A folder name made into a server name: `My Server!` → `my-server`. */
export function sanitizeName(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .replace(/[^a-z0-9]+$/, '')
    .slice(0, 64);
  return SERVER_NAME.test(name) ? name : 'my-server';
}

const RESERVED = new Set(
  'break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof new null return super switch this throw true try typeof var void while with yield let static implements interface package private protected public await'.split(
    ' ',
  ),
);

/** A tool name made into a function name: `get-weather` → `getWeather`. */
export function toExportName(tool: string): string {
  const camel = tool.replace(/[-]+([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase()).replace(/-/g, '');
  const name = /^[0-9]/.test(camel) ? `_${camel}` : camel;
  return RESERVED.has(name) ? `${name}Tool` : name;
}

function checkName(value: string): string | true {
  return SERVER_NAME.test(value)
    ? true
    : 'start with a letter or digit; use letters, digits, ., _ or -; at most 64 characters';
}

function checkTool(template: TemplateName, value: string): string | true {
  if (!TOOL_NAME.test(value)) return '1-64 characters of letters, digits, _ or -';
  const taken = TEMPLATES[template].taken;
  if (taken.includes(value) || taken.includes(toExportName(value))) {
    return `the ${template} template already has a tool named like this (${taken.filter((t) => !/[A-Z]/.test(t)).join(', ')})`;
  }
  return true;
}

function isTemplate(value: string): value is TemplateName {
  return (TEMPLATE_NAMES as readonly string[]).includes(value);
}

export async function initCommand(ctx: CommandContext, dir: string | undefined, options: InitOptions): Promise<void> {
  const result = await initProject(ctx, dir ?? '.', options);
  const shownDir = displayPath(result.dir, ctx.io.cwd);
  const definition = displayPath(join(result.dir, 'server.yaml'), ctx.io.cwd);
  ctx.out.result(result, (p) => {
    p.success(
      `Created ${result.name} from the ${result.template} template in ${result.dir === resolve(ctx.io.cwd) ? 'this folder' : shownDir} (${plural(result.files.length, 'file')})`,
    );
    for (const file of result.files) p.line(`  ${p.style.dim(displayPath(join(result.dir, file), ctx.io.cwd))}`);
    p.line();
    p.line('Next steps:');
    if (result.template === 'advanced') {
      p.next(
        `export OAUTH_ISSUER=https://…   ${p.style.dim('your authorization server, whose tokens clients send (auth.issuer; docs/auth.md)')}`,
      );
    }
    const file = shellQuote(definition);
    const steps: Array<[string, string]> = [
      [`mcpctl validate ${file}`, 'check the definition'],
      [`mcpctl dev ${file}`, 'run it locally'],
      [`mcpctl build ${file}`, 'build it on the service'],
    ];
    const width = Math.max(...steps.map(([command]) => command.length));
    for (const [command, what] of steps) p.next(`${command.padEnd(width)}   ${p.style.dim(what)}`);
  });
}

/** Asks what is missing, checks every target, then writes the template. */
export async function initProject(ctx: CommandContext, dir: string, options: InitOptions): Promise<InitResult> {
  const target = resolve(ctx.io.cwd, dir);
  const yes = options.yes === true;

  if (options.name !== undefined && checkName(options.name) !== true) {
    throw new UserError(`"${options.name}" cannot be a server name: ${checkName(options.name) as string}`, {
      hint: 'pass another --name',
    });
  }
  // Every template writes server.yaml: on a terminal, say it is in the way before asking anything.
  const asks =
    !yes &&
    canPrompt(ctx) &&
    (options.name === undefined || options.template === undefined || options.tool === undefined);
  if (asks) await checkTargets(ctx.io.cwd, target, ['server.yaml'], options.force === true);

  const name =
    options.name ??
    (await askText(ctx, {
      message: 'Server name',
      flag: '--name',
      default: sanitizeName(basename(target)),
      yes,
      validate: checkName,
    }));
  let template: TemplateName;
  if (options.template === undefined) {
    template = await askChoice<TemplateName>(ctx, {
      message: 'Template',
      flag: '--template',
      default: 'basic',
      yes,
      choices: TEMPLATE_NAMES.map((value) => ({ value, description: TEMPLATES[value].description })),
    });
  } else if (isTemplate(options.template)) {
    template = options.template;
  } else {
    throw new UserError(`unknown template "${String(options.template)}"`, {
      hint: `use one of ${TEMPLATE_NAMES.join(', ')}`,
    });
  }
  if (options.tool !== undefined) {
    const problem = checkTool(template, options.tool);
    if (problem !== true)
      throw new UserError(`"${options.tool}" cannot be the first tool's name: ${problem}`, {
        hint: 'pass another --tool',
      });
  }
  const tool =
    options.tool ??
    (await askText(ctx, {
      message: 'Name of the first tool',
      flag: '--tool',
      default: TEMPLATES[template].defaultTool,
      yes,
      validate: (value) => checkTool(template, value),
    }));

  const source = packagePath('templates', template);
  const files = await listFiles(source);
  await checkTargets(ctx.io.cwd, target, files, options.force === true);

  const values: Record<(typeof PLACEHOLDERS)[number], string> = {
    __SERVER_NAME__: name,
    __TOOL_NAME__: tool,
    __TOOL_EXPORT__: toExportName(tool),
    __SCHEMA_PATH__: schemaReference(target),
  };
  for (const file of files) {
    const from = join(source, ...file.split('/'));
    const to = join(target, ...file.split('/'));
    const [content, info] = await Promise.all([readFile(from), stat(from)]);
    await mkdir(dirname(to), { recursive: true });
    await writeFile(to, fillPlaceholders(content, values), { mode: info.mode & 0o777 });
  }
  return { dir: target, files, template, name };
}

function fillPlaceholders(content: Buffer, values: Record<string, string>): Buffer | string {
  const text = content.toString('utf8');
  if (!PLACEHOLDERS.some((p) => text.includes(p))) return content;
  return PLACEHOLDERS.reduce((out, p) => out.split(p).join(values[p] ?? p), text);
}

/** Every file of a template folder, relative, with / separators, sorted. */
async function listFiles(root: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(join(root, prefix), { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const rel = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) files.push(...(await listFiles(root, rel)));
    else if (entry.isFile()) files.push(rel);
  }
  return files.sort((a, b) => (a === 'server.yaml' ? -1 : b === 'server.yaml' ? 1 : a.localeCompare(b)));
}

/** Fails, writing nothing, when a target exists (without --force) or cannot be written. */
async function checkTargets(cwd: string, target: string, files: string[], force: boolean): Promise<void> {
  const info = await lstat(target).catch(() => undefined);
  if (info !== undefined && !info.isDirectory()) {
    throw new UserError(`${displayPath(target, cwd)} exists and is not a folder`, {
      hint: 'choose another folder for the new definition',
    });
  }
  const existing: string[] = [];
  for (const file of files) {
    const found = await lstat(join(target, ...file.split('/'))).catch(() => undefined);
    if (found === undefined) continue;
    if (found.isDirectory()) {
      throw new UserError(`${displayPath(join(target, file), cwd)} is a folder where init writes a file`, {
        hint: 'choose another folder',
      });
    }
    existing.push(file);
  }
  if (existing.length > 0 && !force) {
    throw new UserError(`init would overwrite ${plural(existing.length, 'file')}; nothing was written`, {
      code: 'files_exist',
      problems: existing.map((file) => ({ where: displayPath(join(target, file), cwd), message: 'already exists' })),
      hint: 'pass --force to overwrite them, or choose another folder',
    });
  }
}
