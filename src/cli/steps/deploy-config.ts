/**
 * The configuration of a deployment, assembled before anything is sent: the definition's
 * `deploy:` section for the environment (with `${VAR}` resolved now), then the flags
 * (`--env-file`, `--env-var`, `--domain`, instance counts); and where a field the service
 * complained about was written.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { DeployConfig, Environment } from '../../api/operations.js';
import type { DeployDefaults } from '../../definition/schema.js';
import { ENV_NAME_PATTERN } from '../../definition/names.js';
import { passVariablesHint } from '../api-errors.js';
import { scalingProblem } from '../../definition/scaling.js';
import { rulesOfConfig } from '../../definition/alerts-schema.js';
import { EXIT, UserError, type Problem } from '../../shared/errors.js';
import type { DefinitionFile } from './definition-file.js';

/** The flags that shape a deployment (`deploy`, `up`). */
export interface DeployFlags {
  env?: Environment;
  domain?: string;
  minInstances?: number;
  maxInstances?: number;
  idleSeconds?: number;
  envVar?: string[];
  envFile?: string;
  /** false with --no-wait */
  wait?: boolean;
  /** seconds */
  timeout?: number;
  idempotencyKey?: string;
}

type Env = Record<string, string | undefined>;

/**
 * Parses an env file: `NAME=value` lines, `#` comments, blank lines, an optional `export `
 * prefix, values optionally in single quotes (literal) or double quotes (with \n, \t, \", \\
 * escapes). An unquoted value ends at ` #`. Every bad line is reported with file:line.
 */
export function parseEnvFile(text: string, shown: string): Record<string, string> {
  const values: Record<string, string> = {};
  const problems: Problem[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const where = `${shown}:${index + 1}`;
    let line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    if (line.startsWith('export ')) line = line.slice('export '.length).trimStart();
    const eq = line.indexOf('=');
    if (eq === -1) {
      problems.push({ where, message: 'expected NAME=value' });
      return;
    }
    const name = line.slice(0, eq).trim();
    if (!ENV_NAME_PATTERN.test(name)) {
      problems.push({
        where,
        message: `"${name}" is not a variable name (letters, digits and _, not starting with a digit)`,
      });
      return;
    }
    const rest = line.slice(eq + 1).trim();
    const quote = rest[0];
    if (quote === '"' || quote === "'") {
      const end = findClosingQuote(rest, quote);
      if (end === -1) {
        problems.push({ where, message: `the value of ${name} has no closing ${quote}` });
        return;
      }
      const after = rest.slice(end + 1).trim();
      if (after !== '' && !after.startsWith('#')) {
        problems.push({ where, message: `unexpected text after the quoted value of ${name}` });
        return;
      }
      const inner = rest.slice(1, end);
      values[name] = quote === "'" ? inner : unescapeDouble(inner);
      return;
    }
    const comment = rest.search(/\s#/);
    values[name] = (comment === -1 ? rest : rest.slice(0, comment)).trimEnd();
  });
  if (problems.length > 0) {
    throw new UserError(`${shown} is not a valid env file`, {
      problems,
      hint: 'write one NAME=value per line; # starts a comment',
      code: 'invalid_env_file',
    });
  }
  return values;
}

function findClosingQuote(text: string, quote: string): number {
  for (let i = 1; i < text.length; i++) {
    if (quote === '"' && text[i] === '\\') {
      i++;
      continue;
    }
    if (text[i] === quote) return i;
  }
  return -1;
}

function unescapeDouble(text: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r' })[c] ?? c);
}

/**
 * The config a definition's `deploy:` section gives for an environment: top-level fields, then
 * `environments.<env>` overrides (scaling and env_vars merge field by field), with `${VAR}`
 * references resolved from `env` now. Another environment's overrides are not resolved.
 */
export async function configFromDefinition(
  defaults: DeployDefaults | undefined,
  environment: Environment,
  env: Env,
  options: { replaced?: ReadonlySet<string> } = {},
): Promise<DeployConfig> {
  if (defaults === undefined) return {};
  const { resolveEnvDeep } = await import('../../definition/interpolate.js');
  // env_vars that --env-var or --env-file set anyway need no value from the environment
  const kept = (vars: Record<string, string> | undefined) =>
    vars === undefined || options.replaced === undefined
      ? vars
      : Object.fromEntries(Object.entries(vars).filter(([name]) => !options.replaced!.has(name)));
  const { domain, scaling, resources, env_vars } = defaults;
  const base = resolveEnvDeep({ domain, scaling, resources, env_vars: kept(env_vars) }, env, ['deploy']);
  const override = defaults.environments?.[environment];
  const over =
    override === undefined
      ? {}
      : resolveEnvDeep(
          {
            ...withoutAlerts(override),
            ...(override.env_vars === undefined ? {} : { env_vars: kept(override.env_vars) }),
          },
          env,
          ['deploy', 'environments', environment],
        );
  const merged: DeployConfig = {};
  const mergedDomain = over.domain ?? base.domain;
  if (mergedDomain !== undefined) merged.domain = mergedDomain;
  const mergedScaling = { ...base.scaling, ...over.scaling };
  if (Object.keys(mergedScaling).length > 0) merged.scaling = mergedScaling;
  const mergedResources = { ...base.resources, ...over.resources };
  if (Object.keys(mergedResources).length > 0) merged.resources = mergedResources;
  const mergedVars = { ...base.env_vars, ...over.env_vars };
  if (Object.keys(mergedVars).length > 0) merged.env_vars = mergedVars;
  // alert rules: an environment's list replaces the top-level one; none given leaves the engine's defaults
  const alerts = rulesOfConfig(override?.alerts ?? defaults.alerts);
  if (alerts !== undefined) merged.alerts = alerts;
  return merged;
}

function withoutAlerts<T extends { alerts?: unknown }>(target: T): Omit<T, 'alerts'> {
  const { alerts: _alerts, ...rest } = target;
  return rest;
}

/** The values of an env file given to --env-file. */
export async function readEnvFile(file: string, cwd: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), 'utf8');
  } catch (error) {
    throw new UserError(
      `cannot read the env file ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it does not exist' : (error as Error).message}`,
      {
        hint: 'check the path given to --env-file',
        code: 'file_not_found',
      },
    );
  }
  return parseEnvFile(text, file);
}

/** Applies the flags on top of the file's config: --env-file, then --env-var, then the rest. */
export async function applyDeployFlags(
  config: DeployConfig,
  options: DeployFlags,
  io: { env: Env; cwd: string },
): Promise<DeployConfig> {
  const out: DeployConfig = { ...config, ...(config.scaling === undefined ? {} : { scaling: { ...config.scaling } }) };
  const vars: Record<string, string> = { ...config.env_vars };
  if (options.envFile !== undefined) Object.assign(vars, await readEnvFile(options.envFile, io.cwd));
  const missing: string[] = [];
  for (const name of options.envVar ?? []) {
    if (!ENV_NAME_PATTERN.test(name)) {
      throw new UserError(`--env-var ${name}: not a variable name`, {
        hint: 'pass the NAME only (its value is read from your environment): --env-var API_TOKEN',
      });
    }
    const value = io.env[name];
    if (value === undefined) missing.push(name);
    else vars[name] = value;
  }
  if (missing.length > 0) {
    throw new UserError(
      `--env-var: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set in this environment`,
      {
        exitCode: EXIT.config,
        hint: `set ${missing.length === 1 ? 'it' : 'them'} before running (export ${missing[0]}=…), or use --env-file`,
        code: 'missing_env_var',
      },
    );
  }
  if (Object.keys(vars).length > 0) out.env_vars = vars;
  if (options.domain !== undefined) out.domain = options.domain;
  if (options.minInstances !== undefined || options.maxInstances !== undefined || options.idleSeconds !== undefined) {
    out.scaling = {
      ...out.scaling,
      ...(options.minInstances === undefined ? {} : { min_instances: options.minInstances }),
      ...(options.maxInstances === undefined ? {} : { max_instances: options.maxInstances }),
      ...(options.idleSeconds === undefined ? {} : { idle_seconds: options.idleSeconds }),
    };
  }
  const scalingError = scalingProblem(out.scaling);
  if (scalingError !== undefined) {
    throw new UserError(scalingError, {
      hint: 'use --min-instances and --max-instances (or deploy.scaling) with min ≤ max',
    });
  }
  return out;
}

/**
 * The variables the server needs when it starts must travel with the deployment (from the file's
 * deploy.env_vars, --env-var or --env-file): one that does not is refused before anything is built.
 */
export async function checkRequiredEnv(file: DefinitionFile, config: DeployConfig, env: Env): Promise<void> {
  const { requiredEnvVars } = await import('../../definition/env-refs.js');
  const missing = requiredEnvVars(file.loaded.definition).filter((v) => config.env_vars?.[v.name] === undefined);
  if (missing.length === 0) return;
  const names = missing.map((v) => v.name);
  throw new UserError(
    `${file.loaded.definition.name} needs ${names.join(', ')} when it starts, and this deployment does not pass ${names.length === 1 ? 'it' : 'them'}`,
    {
      code: 'missing_env_var',
      problems: missing.map((v) => ({
        ...withWhere(file.locate(v.field)),
        path: v.field,
        message: `uses \${${v.name}} without a default`,
      })),
      hint: `${passVariablesHint(names, env)}, or list ${names.length === 1 ? 'it' : 'them'} under deploy.env_vars in ${file.shown}`,
    },
  );
}

function withWhere(where: string | undefined): { where?: string } {
  return where === undefined ? {} : { where };
}

/**
 * Maps a field of the deploy request the service complained about (`config.scaling.max_instances`)
 * back to where the definition set it (`deploy.environments.<env>.scaling…`, else `deploy.scaling…`).
 * A field a flag set, or one the file does not have, has no place in the file.
 */
export function locateDeployField(file: DefinitionFile, environment: Environment, options: DeployFlags) {
  const fromFlag = (field: string[]): boolean =>
    (field[0] === 'domain' && options.domain !== undefined) ||
    (field[0] === 'scaling' && field[1] === 'min_instances' && options.minInstances !== undefined) ||
    (field[0] === 'scaling' && field[1] === 'max_instances' && options.maxInstances !== undefined) ||
    (field[0] === 'scaling' && field[1] === 'idle_seconds' && options.idleSeconds !== undefined) ||
    (field[0] === 'env_vars' && ((options.envVar?.length ?? 0) > 0 || options.envFile !== undefined));
  return (path: string): string | undefined => {
    const [head, ...field] = path.split('.');
    if (head !== 'config' || field.length === 0 || fromFlag(field)) return undefined;
    for (const prefix of [['deploy', 'environments', environment], ['deploy']]) {
      const full = [...prefix, ...field];
      let value: unknown = file.loaded.definition;
      for (const key of full)
        value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
      if (value !== undefined) return file.locate(full.join('.'));
    }
    return undefined;
  };
}
