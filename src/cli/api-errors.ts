/**
 * Turns the client's `ApiError` into a `UserError` with the documented exit code, a message that
 * says which service (and where its URL and key came from, never the key), the request id, and
 * the next step. What the service said is shown with its control characters as text.
 */
import { OPERATION_OBJECTS, type ApiClient } from '../api/client.js';
import { ApiError } from '../api/errors.js';
import { connect, displayUrl, type Connection } from './config.js';
import type { CommandContext } from './context.js';
import { EXIT, UserError, type ExitCode, type Problem } from '../shared/errors.js';
import { formatSeconds, shellQuote } from './render/format.js';
import { serviceText } from './render/service-text.js';

export interface ExplainOptions {
  /** maps a request field path (tools[0].name) to where it is written (file:line:column) */
  locate?: (path: string) => string | undefined;
  /** the environment, so a hint can say whether a variable the service asks for is set here */
  env?: Record<string, string | undefined>;
}

function service(connection: Pick<Connection, 'url' | 'urlSource'> | undefined): string {
  if (connection === undefined) return 'the service';
  return `the service at ${displayUrl(connection.url)} (${connection.urlSource})`;
}

function loginHint(connection: Pick<Connection, 'keySource' | 'profile' | 'local'> | undefined): string {
  if (connection?.local === true)
    return 'the local engine rejected its own key: run `mcpctl engine stop` and try again';
  if (connection?.keySource === 'from MCPCTL_API_KEY')
    return 'check MCPCTL_API_KEY, or unset it and run `mcpctl login`';
  const profile =
    connection?.profile === undefined || connection.profile === 'default' ? '' : ` --profile ${connection.profile}`;
  return `run \`mcpctl login${profile}\` to save a valid key, or set MCPCTL_API_KEY`;
}

/** Operations whose command takes --idempotency-key, to pick up a result that is still coming. */
const RESUMABLE = new Set(['build', 'deploy', 'rollback', 'stop']);

/** A wait as every duration is said: whole seconds, `2 min 5 s`. */
function waited(ms: number): string {
  return formatSeconds(Math.round(ms / 1000)) ?? '';
}

function resumeHint(error: ApiError): string | undefined {
  if (error.idempotencyKey === undefined || error.operation === undefined || !RESUMABLE.has(error.operation))
    return undefined;
  return `run the same command again with --idempotency-key ${shellQuote(error.idempotencyKey)} to pick up its result instead of starting another`;
}

/** What an error is explained from: the error, where it went, and the service's words made safe to print. */
interface Situation {
  error: ApiError;
  connection: Connection | undefined;
  /** "the service at <url> (<where the URL came from>)" */
  service: string;
  /** the service's message and code: escape sequences in them must not reach the terminal as such */
  said: string;
  saidCode: string;
  problems: Problem[];
  /** " (after 3 attempts)", or nothing */
  attempts: string;
  /** what the operation makes ("build", "deployment", "test run"), when known */
  object: string | undefined;
  env: Record<string, string | undefined> | undefined;
}

/** The user error an explanation becomes: what went wrong, its exit code, and the next step. */
interface Explanation {
  message: string;
  exitCode: ExitCode;
  hint?: string | undefined;
  problems?: Problem[];
  code?: string;
}

interface Row {
  when: (s: Situation) => boolean;
  explain: (s: Situation) => Explanation;
}

const isHttp = (s: Situation): boolean => s.error.kind === 'http';
const hasCode =
  (code: string) =>
  (s: Situation): boolean =>
    isHttp(s) && !s.error.stillRunning && s.error.code === code;
const hasStatus =
  (test: (status: number) => boolean) =>
  (s: Situation): boolean =>
    isHttp(s) && !s.error.stillRunning && test(s.error.status);
const isTimeout = (s: Situation): boolean => s.error.kind === 'network' && s.error.code === 'timeout';
const keySource = (s: Situation): string => s.connection?.keySource ?? 'unknown source';
const RETRY_LATER = 'it is safe to wait and run the command again';

/** Every way a request can fail, first match wins: how the client failed, then the service's code, then the HTTP status. */
const ROWS: Row[] = [
  {
    when: (s) => s.error.kind === 'aborted',
    explain: () => ({ message: 'interrupted', exitCode: EXIT.interrupted, code: 'interrupted' }),
  },
  {
    // the local engine runs, but stayed too loaded to answer for the whole wait
    when: (s) => isTimeout(s) && s.error.waitedMs !== undefined,
    explain: (s) => {
      const resume = resumeHint(s.error);
      return {
        message: `${s.service} runs but did not answer within ${waited(s.error.waitedMs ?? 0)}`,
        exitCode: EXIT.transient,
        hint: `it is safe to retry once it is less busy; \`mcpctl engine logs\` shows what it does${resume === undefined ? '' : `; ${resume}`}`,
      };
    },
  },
  {
    when: isTimeout,
    explain: (s) => {
      const resume = resumeHint(s.error);
      return {
        message: `${s.service} did not answer in time: ${s.said}${s.attempts}`,
        exitCode: EXIT.transient,
        hint:
          'it is safe to retry; if the service is only slow, wait longer with --request-timeout <seconds> (or MCPCTL_REQUEST_TIMEOUT)' +
          (resume === undefined ? '' : `; the ${s.object ?? 'request'} may still go on there: ${resume}`),
      };
    },
  },
  {
    when: (s) => s.error.kind === 'network',
    explain: (s) => ({
      message: `cannot reach ${s.service}: ${s.said}${s.attempts}`,
      exitCode: EXIT.transient,
      hint:
        s.connection?.local === true
          ? 'it is safe to retry; `mcpctl engine status` shows the local engine'
          : 'it is safe to retry; check that the service is running and the URL is right',
    }),
  },
  {
    // retrying cannot help: the URL points at something that is not a compatible /v1 service
    when: (s) => s.error.kind === 'contract',
    explain: (s) => ({
      message: `${s.service} answered outside the /v1 contract: ${s.said.replace(/^the answer does not follow the \/v1 contract: /, '')}`,
      exitCode: EXIT.config,
      hint: 'check that the URL points at a /v1 service of a compatible version',
    }),
  },
  {
    when: (s) => s.error.stillRunning && s.error.waitedMs !== undefined,
    explain: (s) => ({
      message: `the ${s.object ?? 'request'} is still running on ${s.service} after ${waited(s.error.waitedMs ?? 0)} of waiting`,
      exitCode: EXIT.timeout,
      code: 'still_running',
      hint: resumeHint(s.error) ?? RETRY_LATER,
    }),
  },
  {
    when: (s) => s.error.stillRunning,
    explain: (s) => ({
      message: `the ${s.object ?? 'request'} is still running on ${s.service}: ${s.said}`,
      exitCode: EXIT.timeout,
      code: 'still_running',
      hint: resumeHint(s.error) ?? RETRY_LATER,
    }),
  },
  {
    when: hasCode('build_failed'),
    explain: (s) => ({
      message: `the build failed: ${s.said}`,
      exitCode: EXIT.build_failed,
      problems: s.problems,
      hint: 'fix the definition (`mcpctl validate <file>` checks it offline) and build again',
    }),
  },
  {
    when: hasCode('deploy_failed'),
    explain: (s) => ({
      message: `the deployment failed: ${s.said}`,
      exitCode: EXIT.deploy_failed,
      problems: s.problems,
      hint: 'read its logs: `mcpctl logs <deployment_id>`',
    }),
  },
  {
    // the engine's disk refused a write: nothing about the request is wrong
    when: (s) => hasCode('storage_full')(s) || hasCode('storage_unwritable')(s),
    explain: (s) => ({
      message: `${s.service} could not save its work: ${s.said}`,
      exitCode: EXIT.transient,
      hint: storageHint(s),
    }),
  },
  {
    when: hasCode('idempotency_mismatch'),
    explain: (s) => ({
      message: s.said,
      exitCode: EXIT.usage,
      hint: 'this idempotency key was used with another request; pass a new --idempotency-key, or none',
    }),
  },
  {
    when: hasCode('validation_failed'),
    explain: (s) => ({
      message: `the service rejected the request: ${s.said}`,
      exitCode: EXIT.usage,
      problems: s.problems,
      hint: validationHint(s.error, s.problems, s.env),
    }),
  },
  {
    when: hasCode('model_not_configured'),
    explain: (s) => ({
      message: s.said,
      exitCode: EXIT.config,
      hint:
        s.connection?.local === true
          ? 'export the variable named above, run `mcpctl engine stop`, and the next command starts the engine with it; or use --model mcpctl-local'
          : 'ask whoever runs the service to set the variable named above, or use another --model',
    }),
  },
  {
    when: hasStatus((status) => status === 401),
    explain: (s) => ({
      message: `${s.service} rejected the API key (${keySource(s)}): ${s.said}`,
      exitCode: EXIT.config,
      hint: loginHint(s.connection),
    }),
  },
  {
    when: hasStatus((status) => status === 403),
    explain: (s) => ({
      message: `the API key (${keySource(s)}) may not do this: ${s.said}`,
      exitCode: EXIT.config,
      hint: 'use a key that may, with `mcpctl login` or MCPCTL_API_KEY',
    }),
  },
  {
    when: hasStatus((status) => status === 429),
    explain: (s) => ({
      message: `${s.service} is rate-limiting requests: ${s.said}${s.attempts}`,
      exitCode: EXIT.transient,
      hint: `it is safe to retry ${s.error.retryAfter === undefined ? 'in a moment' : `after ${waited(s.error.retryAfter * 1000)}`}`,
    }),
  },
  {
    when: hasStatus((status) => status === 501),
    explain: (s) => ({
      message: `${s.service} does not offer this: ${s.said}`,
      exitCode: EXIT.config,
      problems: s.problems,
      hint: 'use a service that does (--api-url, or a profile)',
    }),
  },
  {
    when: hasStatus((status) => status >= 500),
    explain: (s) => ({
      message: `${s.service} failed (HTTP ${s.error.status} ${s.saidCode}): ${s.said}${s.attempts}`,
      exitCode: EXIT.transient,
      hint:
        s.error.retryAfter === undefined
          ? 'it is safe to retry; if it keeps failing, report it with the request id'
          : `it is safe to retry after ${waited(s.error.retryAfter * 1000)}`,
    }),
  },
  {
    when: hasStatus((status) => status === 404),
    explain: (s) => ({
      message: s.said,
      exitCode: EXIT.usage,
      problems: s.problems,
      hint: 'check the id; `mcpctl ls` lists servers and deployments',
    }),
  },
  {
    when: hasStatus((status) => status === 409),
    explain: (s) => ({
      message: s.said,
      exitCode: EXIT.usage,
      problems: s.problems,
      hint:
        s.object === 'test run' || s.object === 'build'
          ? 'it is safe to run the command again once the service is done'
          : '`mcpctl status <deployment_id>` shows the current state',
    }),
  },
  {
    when: hasStatus((status) => status === 413),
    explain: (s) => ({
      message: s.said,
      exitCode: EXIT.usage,
      problems: s.problems,
      hint: 'make the definition and its files smaller',
    }),
  },
];

/** What to free or fix where the engine keeps its files; for a remote service, who can. */
function storageHint(s: Situation): string {
  const full = s.error.code === 'storage_full';
  if (s.connection?.local !== true)
    return full
      ? 'ask whoever runs the service to free space on its disk, then run the command again'
      : 'ask whoever runs the service to let it write its files again, then run the command again';
  if (!full)
    return "let the engine's user write the files named above (their owner and permissions, or a read-only mount), then run the command again";
  return (
    'free space on that disk: remove the deployments and servers you no longer need with `mcpctl rm`, and the logs ' +
    'of old deployments in `deployment-logs` of the engine’s folder (`mcpctl engine status` shows it); then run the command again'
  );
}

function otherRejection(s: Situation): Explanation {
  return {
    message: `${s.service} rejected the request (HTTP ${s.error.status} ${s.saidCode}): ${s.said}`,
    exitCode: EXIT.usage,
    problems: s.problems,
  };
}

function situation(error: ApiError, connection: Connection | undefined, options: ExplainOptions): Situation {
  return {
    error,
    connection,
    service: service(connection),
    said: serviceText(error.message),
    saidCode: serviceText(error.code),
    problems: error.details.map((d) => {
      const where = options.locate?.(d.path);
      return { ...(where === undefined ? {} : { where }), path: serviceText(d.path), message: serviceText(d.message) };
    }),
    attempts: error.attempts > 1 ? ` (after ${error.attempts} attempts)` : '',
    object: OPERATION_OBJECTS[error.operation ?? ''],
    env: options.env,
  };
}

/** The user-facing form of any error that came from the client; other errors pass through. */
export function explainApiError(error: unknown, connection?: Connection, options: ExplainOptions = {}): unknown {
  if (!(error instanceof ApiError)) return error;
  const s = situation(error, connection, options);
  const explained = (ROWS.find((row) => row.when(s))?.explain ?? otherRejection)(s);
  const requestId = error.requestId === undefined ? undefined : serviceText(error.requestId);
  return new UserError(explained.message, {
    cause: error,
    code: explained.code ?? error.code,
    ...(requestId === undefined ? {} : { requestId }),
    exitCode: explained.exitCode,
    ...(explained.hint === undefined ? {} : { hint: explained.hint }),
    ...(explained.problems === undefined ? {} : { problems: explained.problems }),
  });
}

/**
 * What to do about a rejected request: a deploy that lacks a variable its server needs says which
 * flag passes it; anything else, the fields named above.
 */
function validationHint(error: ApiError, problems: Problem[], env: Record<string, string | undefined> = {}): string {
  const missing = problems
    .map((p) => /^config\.env_vars\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(p.path ?? '')?.[1])
    .filter((name): name is string => name !== undefined);
  if ((error.operation === 'deploy' || error.operation === 'rollback') && missing.length > 0) {
    return passVariablesHint(missing, env);
  }
  return 'fix the fields named above';
}

/** `add --env-var A --env-var B` (their values come from this environment), saying which still need setting. */
export function passVariablesHint(names: readonly string[], env: Record<string, string | undefined>): string {
  const flags = names.map((name) => `--env-var ${name}`).join(' ');
  const unset = names.filter((name) => env[name] === undefined);
  const them = names.length === 1 ? 'it' : 'them';
  if (unset.length === 0)
    return `pass ${them} with ${flags} (${them === 'it' ? 'its value comes' : 'their values come'} from your environment)`;
  return `export ${unset.map((name) => `${name}=…`).join(' ')}, then pass ${them} with ${flags}`;
}

/**
 * Connects to the configured service, runs `fn` with a client, closes it, and turns any client
 * error into a user error. The usual shape of a command that talks to `/v1`.
 */
export async function withApi<T>(
  ctx: CommandContext,
  fn: (client: ApiClient, connection: Connection) => Promise<T>,
  options: ExplainOptions = {},
): Promise<T> {
  const { client, connection } = await connect(ctx);
  try {
    return await fn(client, connection);
  } catch (error) {
    throw explainApiError(error, connection, options);
  } finally {
    await client.close();
  }
}
