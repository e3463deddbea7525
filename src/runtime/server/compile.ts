/**
 * The compile stage of a runtime: a definition becomes what serving it needs, once, before the
 * first request. `${VAR}` references resolve against the environment (each value a secret from
 * then on), auth becomes a guard, and tools, resources, prompts and completions are compiled.
 * Every problem found is collected; any at all and the start fails with all of them.
 */
import { realpath } from 'node:fs/promises';
import type { ServerCapabilities } from '@modelcontextprotocol/server';
import { EnvSyntaxError, MissingEnvVarError } from '../../definition/errors.js';
import { listEnvRefs, resolveEnvRefs, type Env } from '../../definition/interpolate.js';
import type { Problem } from '../../shared/errors.js';
import { createGuard, guardOptionsFromEnv, resolveAuth, type Guard, type ResolvedAuth } from './auth.js';
import { compileCompletions, type Completions } from './completions.js';
import type { CompileContext } from './content.js';
import { createEgress, type Egress } from './egress.js';
import { redactingLogger, Secrets, silentLogger, type RuntimeLogger } from './logger.js';
import type { Operations, ServerShape } from './mcp-server.js';
import { compilePrompt, type CompiledPrompt } from './prompts.js';
import { compileResources, type ResourceSet } from './resources.js';
import { listCacheHints } from './cache-hints.js';
import type { RuntimeDefinition, RuntimeOptions } from './runtime-types.js';
import { RuntimeStartError } from './start-error.js';
import { TASKS_EXTENSION } from './tasks.js';
import { compileTool, type CompiledTool, type ToolCompileContext } from './tools.js';
import { createSchemaCompiler } from './validate-args.js';

export const DEFAULT_VERSION = '0.1.0';

/** What compiling a definition yields: everything serving it reads. */
export interface CompiledDefinition {
  serverInfo: { name: string; version: string };
  /** every value that came from the environment, hidden from logs and from error texts */
  secrets: Secrets;
  logger: RuntimeLogger;
  /** who may call: absent when anyone may */
  guard: Guard | undefined;
  realDir: string;
  egress: Egress;
  tools: Map<string, CompiledTool>;
  resources: ResourceSet;
  prompts: Map<string, CompiledPrompt>;
  completions: Completions;
  counts: { tools: number; resources: number; prompts: number };
  shape: ServerShape;
  /** keeps a session per client (the definition's `sessions: true`) */
  sessions: boolean;
}

type ResolveEnv = (value: string, path: string) => string;

export async function compileDefinition(
  definition: RuntimeDefinition,
  options: RuntimeOptions,
): Promise<CompiledDefinition> {
  const env = options.env ?? {};
  const problems: Problem[] = [];
  // The list of secrets grows while the definition compiles.
  const secrets = new Secrets(options.secrets);
  const serverInfo = { name: definition.name, version: definition.version ?? DEFAULT_VERSION };
  const resolveEnv = createEnvResolver(env, secrets, problems);
  const guard = compileGuard(definition, options, resolveEnv, secrets);
  const logger = redactingLogger(options.logger ?? silentLogger, secrets);
  const realDir = await resolveDir(options.dir);
  const egress = createEgress(definition.egress, {
    allowPrivate: options.allowPrivateEgress === true,
    report: (report) => {
      if (report.refused !== undefined) logger.log({ level: 'warn', event: 'egress_refused', ...report });
    },
  });
  const parts = await compileParts(definition, { realDir, server: serverInfo, problems, egress }, resolveEnv, {
    path: env.PATH,
    logger,
  });
  if (problems.length > 0) throw new RuntimeStartError(problems);
  const counts = { tools: parts.tools.size, resources: parts.resources.count, prompts: parts.prompts.size };
  const shape: ServerShape = {
    info: definition.icons === undefined ? serverInfo : { ...serverInfo, icons: definition.icons },
    instructions: definition.instructions,
    cacheHints: listCacheHints(definition),
    capabilities: withTasks(capabilitiesOf(counts, parts.completions.any), parts.tools),
    listChanged: options.listChanged === true,
  };
  const sessions = definition.sessions === true;
  return { serverInfo, secrets, logger, guard, realDir, egress, ...parts, counts, shape, sessions };
}

/** Resolves `${VAR}` references; a value it reads becomes a secret, a reference it cannot resolve a problem. */
function createEnvResolver(env: Env, secrets: Secrets, problems: Problem[]): ResolveEnv {
  return (value, path) => {
    try {
      const resolved = resolveEnvRefs(value, env, path);
      for (const name of listEnvRefs(value)) {
        const set = env[name];
        if (set !== undefined && set !== '') secrets.add(set);
      }
      return resolved;
    } catch (error) {
      if (error instanceof MissingEnvVarError || error instanceof EnvSyntaxError) {
        problems.push({ message: error.message });
        return '';
      }
      throw error;
    }
  };
}

/** The guard of `/mcp`: the `token` option overrides the definition's `auth`; bearer tokens are secrets. */
function compileGuard(
  definition: RuntimeDefinition,
  options: RuntimeOptions,
  resolveEnv: ResolveEnv,
  secrets: Secrets,
): Guard | undefined {
  const auth: ResolvedAuth | undefined =
    options.token !== undefined
      ? { type: 'bearer', tokens: [options.token] }
      : resolveAuth(definition.auth, definition.tools ?? [], resolveEnv);
  if (auth === undefined) return undefined;
  if (auth.type === 'bearer') for (const token of auth.tokens) secrets.add(token);
  return createGuard(auth, { ...guardOptionsFromEnv(options.env ?? {}), resourceName: definition.name });
}

async function resolveDir(dir: string): Promise<string> {
  try {
    return await realpath(dir);
  } catch {
    throw new RuntimeStartError([{ message: `the folder ${dir} does not exist` }]);
  }
}

type CompiledParts = Pick<Operations, 'tools' | 'resources' | 'prompts' | 'completions'>;

/** Tools, resources, prompts and completions; problems go to `base.problems`. */
async function compileParts(
  definition: RuntimeDefinition,
  shared: Omit<CompileContext, 'readResource'>,
  resolveEnv: ResolveEnv,
  toolsOptions: { path: string | undefined; logger: RuntimeLogger },
): Promise<CompiledParts> {
  // embedded resources in tool results read defined resources: bound once those are compiled
  const bound: { resources?: ResourceSet } = {};
  const base: CompileContext = {
    ...shared,
    readResource: (uri, call) => {
      if (bound.resources === undefined) throw new Error('resources are not compiled yet');
      return bound.resources.read(uri, call);
    },
  };
  const resources = compileResources(definition.resources ?? [], {
    ...base,
    resolveEnv,
    serverCache: definition.cache,
  });
  bound.resources = resources;
  const toolContext: ToolCompileContext = {
    ...base,
    resolveEnv,
    compileSchema: createSchemaCompiler(),
    path: toolsOptions.path,
    onInternalError: (tool, error) =>
      toolsOptions.logger.log({
        level: 'error',
        event: 'handler_error',
        tool,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      }),
  };
  const tools = new Map<string, CompiledTool>();
  for (const [i, tool] of (definition.tools ?? []).entries())
    tools.set(tool.name, await compileTool(tool, `tools[${i}]`, toolContext));
  const prompts = new Map<string, CompiledPrompt>();
  for (const [i, prompt] of (definition.prompts ?? []).entries())
    prompts.set(prompt.name, await compilePrompt(prompt, `prompts[${i}]`, base));
  const completions = await compileCompletions(definition.prompts ?? [], definition.resources ?? [], base);
  return { tools, resources, prompts, completions };
}

/** What every server declares: tools when there are any (or nothing else), the rest when present. */
/** A tool that runs as a task makes the server declare the tasks extension. */
function withTasks(capabilities: ServerCapabilities, tools: Map<string, CompiledTool>): ServerCapabilities {
  if (![...tools.values()].some((tool) => tool.task !== undefined)) return capabilities;
  return { ...capabilities, extensions: { ...capabilities.extensions, [TASKS_EXTENSION]: {} } };
}

function capabilitiesOf(counts: CompiledDefinition['counts'], completions: boolean): ServerCapabilities {
  const capabilities: ServerCapabilities = { logging: {} };
  if (counts.tools > 0 || (counts.resources === 0 && counts.prompts === 0)) capabilities.tools = {};
  if (counts.resources > 0) capabilities.resources = {};
  if (counts.prompts > 0) capabilities.prompts = {};
  if (completions) capabilities.completions = {};
  return capabilities;
}
