/**
 * The check of a build: the bundle started once with placeholder values, asked over MCP for what
 * it offers, and compared with what the definition declares; then stopped.
 */
import type { BuildRequest } from '../api/contract.js';
import { parseEnvRefs } from '../definition/interpolate.js';
import type { Problem } from '../shared/errors.js';
import type { RuntimeModules } from './builder.js';
import type { Logger } from './engine-log.js';
import type { LocalCredentials } from './local-credentials.js';
import { probeMcp, ProbeError } from './mcp-probe.js';
import { ServiceError } from './service-error.js';

export interface SmokeCheckDeps {
  /** how the check calls a server with `auth` */
  localCredentials: LocalCredentials;
  /** how long the started server has to answer */
  timeoutMs: number;
  /** sent as the client version */
  clientVersion: string;
  logger: Logger;
}

/** Placeholder for `${VAR}` references during the smoke start: the real values come with a deployment's env_vars. */
export const PLACEHOLDER_VALUE = 'mcpctl-build-check';
/**
 * Starts the bundle, checks that it answers MCP and offers what the definition declares, stops it.
 * `passed` is called as soon as the check passed, before the process is stopped.
 */
export async function smokeCheck(
  deps: SmokeCheckDeps,
  runtime: RuntimeModules,
  request: BuildRequest,
  bundleDir: string,
  passed: () => void,
): Promise<void> {
  const access = await deps.localCredentials.prepare(request, placeholderEnv(request));
  const env = access.env;
  const recent: string[] = [];
  const onLog = (line: string) => {
    recent.push(line.slice(0, 300));
    if (recent.length > 20) recent.shift();
  };
  let child;
  try {
    child = await runtime.startRuntimeProcess({
      bundleDir,
      port: 0,
      host: '127.0.0.1',
      env,
      logLevel: 'info',
      onLog,
    });
  } catch (error) {
    const problems = problemsOf(error);
    // the details say why, each at its field; the message need not say it again
    throw new ServiceError(
      'build_failed',
      problems === undefined ? `the server did not start: ${messageOf(error)}` : 'the server did not start',
      problems,
    );
  }
  try {
    const token = await access.token(child.mcpUrl);
    const found = await probeMcp({
      mcpUrl: child.mcpUrl,
      ...(token === undefined ? {} : { token }),
      lists: {
        tools: (request.tools?.length ?? 0) > 0,
        resources: (request.resources?.length ?? 0) > 0,
        prompts: (request.prompts?.length ?? 0) > 0,
      },
      timeoutMs: deps.timeoutMs,
      clientVersion: deps.clientVersion,
    });
    const missing = [
      ...missingItems(request.tools ?? [], (t) => t.name, found.tools, 'tools', 'name', 'tool'),
      // URI templates are listed apart, and a resource limited to `users` is listed only to them.
      ...missingItems(
        request.resources ?? [],
        (r) => r.uri,
        found.resources,
        'resources',
        'uri',
        'resource',
        (r) => !r.uri.includes('{') && r.users === undefined,
      ),
      ...missingItems(request.prompts ?? [], (p) => p.name, found.prompts, 'prompts', 'name', 'prompt'),
    ];
    if (missing.length > 0)
      throw new ServiceError(
        'build_failed',
        'the server started but does not offer everything the definition declares',
        missing,
      );
    passed();
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    if (error instanceof ProbeError) {
      const logs = recent.length === 0 ? [] : [{ path: '', message: `server log: ${recent.slice(-5).join(' | ')}` }];
      throw new ServiceError('build_failed', `the server started but did not answer MCP: ${error.message}`, logs);
    }
    throw error;
  } finally {
    await child
      .stop(2000)
      .catch((error: unknown) => deps.logger.warn('could not stop a build check server', { pid: child.pid, error }));
  }
}

/**
 * A value for every variable the definition references without a default, so the server can
 * start for the check. A bearer token's variables are left to local-credentials.ts, which gives
 * them a random value it then sends.
 */
export function placeholderEnv(request: BuildRequest): Record<string, string> {
  const env: Record<string, string> = {};
  const { files: _files, auth, ...rest } = request;
  const visit = (value: unknown, depth: number): void => {
    if (depth > 80) return;
    if (typeof value === 'string') {
      if (!value.includes('${')) return;
      try {
        for (const part of parseEnvRefs(value))
          if (part.kind === 'ref' && part.fallback === undefined) env[part.name] = PLACEHOLDER_VALUE;
      } catch {
        // a malformed reference fails the start with its own message
      }
    } else if (Array.isArray(value)) value.forEach((item) => visit(item, depth + 1));
    else if (value !== null && typeof value === 'object')
      Object.values(value).forEach((item) => visit(item, depth + 1));
  };
  visit(rest, 0);
  if (auth?.type === 'oauth') visit(auth, 0);
  return env;
}

function missingItems<T>(
  declared: T[],
  keyOf: (item: T) => string,
  offered: string[],
  field: string,
  keyField: string,
  what: string,
  listed: (item: T) => boolean = () => true,
): Array<{ path: string; message: string }> {
  const have = new Set(offered);
  const missing: Array<{ path: string; message: string }> = [];
  declared.forEach((item, index) => {
    if (listed(item) && !have.has(keyOf(item)))
      missing.push({
        path: `${field}[${index}].${keyField}`,
        message: `the started server does not list this ${what}`,
      });
  });
  return missing;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The problems of the runtime's errors become details: a RuntimeProcessError's `{ path, message }`
 * as they are, a BundleError's lines (each names its own source file) as messages.
 */
export function problemsOf(error: unknown): Array<{ path: string; message: string }> | undefined {
  const { details, problems } = (error ?? {}) as { details?: Problem[]; problems?: unknown };
  const found: Problem[] = Array.isArray(details)
    ? details
    : Array.isArray(problems)
      ? problems.filter((p): p is string => typeof p === 'string').map((message) => ({ message }))
      : [];
  return found.length === 0 ? undefined : found.map((p) => ({ path: p.path ?? '', message: p.message }));
}
