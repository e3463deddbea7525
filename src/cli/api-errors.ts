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
import { shellQuote } from './render/format.js';
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

function minutes(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.round(s / 60)} min`;
}

function resumeHint(error: ApiError): string | undefined {
  if (error.idempotencyKey === undefined || error.operation === undefined || !RESUMABLE.has(error.operation))
    return undefined;
  return `run the same command again with --idempotency-key ${shellQuote(error.idempotencyKey)} to pick up its result instead of starting another`;
}

/** The user-facing form of any error that came from the client; other errors pass through. */
export function explainApiError(error: unknown, connection?: Connection, options: ExplainOptions = {}): unknown {
  if (!(error instanceof ApiError)) return error;
  const requestId = error.requestId === undefined ? undefined : serviceText(error.requestId);
  const base = { cause: error, code: error.code, ...(requestId === undefined ? {} : { requestId }) };
  const fail = (
    message: string,
    exitCode: ExitCode,
    extra: { hint?: string | undefined; problems?: Problem[]; code?: string } = {},
  ) =>
    new UserError(message, {
      ...base,
      exitCode,
      ...(extra.hint === undefined ? {} : { hint: extra.hint }),
      ...(extra.problems === undefined ? {} : { problems: extra.problems }),
      ...(extra.code === undefined ? {} : { code: extra.code }),
    });
  // the service's own words: a message or field name carrying escape sequences must not reach the terminal as such
  const said = serviceText(error.message);
  const saidCode = serviceText(error.code);
  const problems: Problem[] = error.details.map((d) => {
    const where = options.locate?.(d.path);
    return { ...(where === undefined ? {} : { where }), path: serviceText(d.path), message: serviceText(d.message) };
  });
  const attempts = error.attempts > 1 ? ` (after ${error.attempts} attempts)` : '';
  const object = OPERATION_OBJECTS[error.operation ?? ''];

  switch (error.kind) {
    case 'aborted':
      return new UserError('interrupted', { ...base, exitCode: EXIT.interrupted, code: 'interrupted' });
    case 'network': {
      if (error.code === 'timeout' && error.waitedMs !== undefined) {
        // the local engine runs, but stayed too loaded to answer for the whole wait
        return fail(
          `${service(connection)} runs but did not answer within ${minutes(error.waitedMs)}`,
          EXIT.transient,
          {
            hint: `it is safe to retry once it is less busy; \`mcpctl engine logs\` shows what it does${resumeHint(error) === undefined ? '' : `; ${resumeHint(error)!}`}`,
          },
        );
      }
      if (error.code === 'timeout') {
        const resume = resumeHint(error);
        return fail(`${service(connection)} did not answer in time: ${said}${attempts}`, EXIT.transient, {
          hint:
            'it is safe to retry; if the service is only slow, wait longer with --request-timeout <seconds> (or MCPCTL_REQUEST_TIMEOUT)' +
            (resume === undefined ? '' : `; the ${object ?? 'request'} may still go on there: ${resume}`),
        });
      }
      return fail(`cannot reach ${service(connection)}: ${said}${attempts}`, EXIT.transient, {
        hint:
          connection?.local === true
            ? 'it is safe to retry; `mcpctl engine status` shows the local engine'
            : 'it is safe to retry; check that the service is running and the URL is right',
      });
    }
    case 'contract':
      // Retrying cannot help: the URL points at something that is not a compatible /v1 service.
      return fail(
        `${service(connection)} answered outside the /v1 contract: ${said.replace(/^the answer does not follow the \/v1 contract: /, '')}`,
        EXIT.config,
        {
          hint: 'check that the URL points at a /v1 service of a compatible version',
        },
      );
    case 'http':
      break;
  }

  if (error.stillRunning) {
    const what = object ?? 'request';
    if (error.waitedMs !== undefined) {
      return fail(
        `the ${what} is still running on ${service(connection)} after ${minutes(error.waitedMs)} of waiting`,
        EXIT.timeout,
        {
          code: 'still_running',
          hint: resumeHint(error) ?? 'it is safe to wait and run the command again',
        },
      );
    }
    return fail(`the ${what} is still running on ${service(connection)}: ${said}`, EXIT.timeout, {
      code: 'still_running',
      hint: resumeHint(error) ?? 'it is safe to wait and run the command again',
    });
  }

  const message = said;
  switch (error.code) {
    case 'build_failed':
      return fail(`the build failed: ${message}`, EXIT.build_failed, {
        problems,
        hint: 'fix the definition (`mcpctl validate <file>` checks it offline) and build again',
      });
    case 'deploy_failed':
      return fail(`the deployment failed: ${message}`, EXIT.deploy_failed, {
        problems,
        hint: 'read its logs: `mcpctl logs <deployment_id>`',
      });
    case 'idempotency_mismatch':
      return fail(message, EXIT.usage, {
        hint: 'this idempotency key was used with another request; pass a new --idempotency-key, or none',
      });
    case 'validation_failed':
      return fail(`the service rejected the request: ${message}`, EXIT.usage, {
        problems,
        hint: validationHint(error, problems, options.env),
      });
    case 'model_not_configured':
      return fail(message, EXIT.config, {
        hint:
          connection?.local === true
            ? 'export the variable named above, run `mcpctl engine stop`, and the next command starts the engine with it; or use --model mcpctl-local'
            : 'ask whoever runs the service to set the variable named above, or use another --model',
      });
  }
  if (error.status === 401) {
    return fail(
      `${service(connection)} rejected the API key (${connection?.keySource ?? 'unknown source'}): ${message}`,
      EXIT.config,
      {
        hint: loginHint(connection),
      },
    );
  }
  if (error.status === 403) {
    return fail(`the API key (${connection?.keySource ?? 'unknown source'}) may not do this: ${message}`, EXIT.config, {
      hint: 'use a key that may, with `mcpctl login` or MCPCTL_API_KEY',
    });
  }
  if (error.status === 429) {
    const when = error.retryAfter === undefined ? 'in a moment' : `after ${error.retryAfter} s`;
    return fail(`${service(connection)} is rate-limiting requests: ${message}${attempts}`, EXIT.transient, {
      hint: `it is safe to retry ${when}`,
    });
  }
  if (error.status === 501) {
    return fail(`${service(connection)} does not offer this: ${message}`, EXIT.config, {
      problems,
      hint: 'use a service that does (--api-url, or a profile)',
    });
  }
  if (error.status >= 500) {
    return fail(
      `${service(connection)} failed (HTTP ${error.status} ${saidCode}): ${message}${attempts}`,
      EXIT.transient,
      {
        hint:
          error.retryAfter === undefined
            ? 'it is safe to retry; if it keeps failing, report it with the request id'
            : `it is safe to retry after ${error.retryAfter} s`,
      },
    );
  }
  if (error.status === 404) {
    return fail(message, EXIT.usage, { problems, hint: 'check the id; `mcpctl ls` lists servers and deployments' });
  }
  if (error.status === 409) {
    return fail(message, EXIT.usage, {
      problems,
      hint:
        object === 'test run' || object === 'build'
          ? 'it is safe to run the command again once the service is done'
          : '`mcpctl status <deployment_id>` shows the current state',
    });
  }
  if (error.status === 413) {
    return fail(message, EXIT.usage, { problems, hint: 'make the definition and its files smaller' });
  }
  return fail(
    `${service(connection)} rejected the request (HTTP ${error.status} ${saidCode}): ${message}`,
    EXIT.usage,
    { problems },
  );
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
