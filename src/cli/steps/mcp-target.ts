/**
 * What `mcpctl tools` and `mcpctl call` talk to, from what the user typed: a definition file (or a
 * folder with a server.yaml), served for the command alone (steps/mcp-serve-file.ts); an MCP URL
 * (a `mcpctl dev` server or any other); or a deployment, by id or name (steps/deployment-target.ts),
 * reached at its stable URL `<service>/d/<server>.<env>/mcp` so that a redeploy between two calls
 * changes nothing. The connection is the official MCP client over Streamable HTTP, and every way it
 * can fail becomes a UserError that says what to do.
 */
import type * as ClientSdkModule from '@modelcontextprotocol/client';
import type { Deployment } from '../../api/operations.js';
import { EXIT, UserError } from '../../shared/errors.js';
import { VERSION } from '../../shared/version.js';
import type { CommandContext } from '../context.js';
import { formatSeconds } from '../render/format.js';
import { serviceText } from '../render/service-text.js';

export type McpClient = ClientSdkModule.Client;

/** An open connection to the server a target names; close it when done. */
export interface McpSession {
  client: McpClient;
  /** how messages name the server: the file, the deployment's name, or the URL */
  label: string;
  mcpUrl: string;
  /** runs a request, turning what the client throws into a UserError about this server */
  request<T>(fn: (client: McpClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface OpenTargetOptions {
  /** `Name: value` headers to send with every request (--header) */
  headers?: readonly string[] | undefined;
  /** the caller of a definition file served for the command (per-user resources) */
  userId?: string | undefined;
  /** seconds to wait for each answer */
  timeoutSeconds: number;
  /** the command, for the candidates an ambiguous deployment name lists */
  command: string;
}

/** Where a target was found, and what a refused credential is explained with. */
interface Resolved {
  mcpUrl: string;
  label: string;
  headers: Record<string, string>;
  /** what the 401 hint adds for this kind of target */
  authHelp: string | undefined;
  close(): Promise<void>;
}

/** What the last answer that was not 2xx said: the client's errors do not carry all of it. */
interface FailedAnswer {
  status?: number;
  authenticate?: string | null;
  message?: string;
}

/** Opens a session with the server `target` names. */
export async function openTarget(ctx: CommandContext, target: string, options: OpenTargetOptions): Promise<McpSession> {
  const given = parseHeaders(options.headers ?? []);
  const resolved = await resolveTarget(ctx, target, options);
  const headers = { ...resolved.headers, ...given };
  const sdk = await import('@modelcontextprotocol/client');
  const failed: FailedAnswer = {};
  const transport = new sdk.StreamableHTTPClientTransport(new URL(resolved.mcpUrl), {
    requestInit: { headers },
    fetch: watchFailures(failed),
  });
  const client = new sdk.Client({ name: 'mcpctl', version: VERSION });
  const timeout = Math.round(options.timeoutSeconds * 1000);
  const explain = (error: unknown) =>
    explainFailure(sdk, error, failed, { resolved, sentAuthorization: hasAuthorization(headers), timeout });
  const close = async () => {
    await client.close().catch(() => {});
    await resolved.close();
  };
  try {
    await client.connect(transport, { timeout, signal: ctx.signal });
  } catch (error) {
    await close();
    throw explain(error);
  }
  return {
    client,
    label: resolved.label,
    mcpUrl: resolved.mcpUrl,
    async request(fn) {
      try {
        return await fn(client);
      } catch (error) {
        throw explain(error);
      }
    },
    close,
  };
}

/** `Name: value` pairs as headers; a malformed one is a usage error. */
export function parseHeaders(values: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const colon = value.indexOf(':');
    const name = colon > 0 ? value.slice(0, colon).trim() : '';
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
      throw new UserError(`--header ${JSON.stringify(value)} is not "Name: value"`, {
        hint: `write it as --header 'Authorization: Bearer <token>'`,
      });
    }
    headers[name] = value.slice(colon + 1).trim();
  }
  return headers;
}

function hasAuthorization(headers: Record<string, string>): boolean {
  return Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
}

/** What kind of target a value is: a URL, an existing file or folder, or else a deployment's name or id. */
async function resolveTarget(ctx: CommandContext, target: string, options: OpenTargetOptions): Promise<Resolved> {
  if (/^https?:\/\//i.test(target)) return urlTarget(target);
  const { definitionFileOf, serveFile } = await import('./mcp-serve-file.js');
  const file = await definitionFileOf(ctx.io.cwd, target);
  if (file !== undefined) {
    const served = await serveFile(ctx, file, { userId: options.userId });
    const unset = served.unsetTokenVars;
    return {
      mcpUrl: served.mcpUrl,
      label: served.shown,
      headers: served.headers,
      authHelp:
        unset.length === 0 ? undefined : `set ${unset.join(' or ')}, the variable its auth reads the token from`,
      close: () => served.close(),
    };
  }
  if (/\.ya?ml$/i.test(target) || target.includes('/')) {
    throw new UserError(`${target}: no such file`, {
      hint: 'give a definition file, a folder with a server.yaml, an MCP URL, or a deployment (`mcpctl ls` lists them)',
    });
  }
  return deploymentTarget(ctx, target, options.command);
}

function urlTarget(target: string): Resolved {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new UserError(`not a URL: ${target}`, { hint: 'an MCP URL looks like http://127.0.0.1:8080/mcp' });
  }
  // the address `mcpctl dev` and a deployment print first is the server's base: its MCP endpoint is /mcp
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/mcp';
  return { mcpUrl: url.href, label: url.href, headers: {}, authHelp: undefined, close: async () => {} };
}

async function deploymentTarget(ctx: CommandContext, value: string, command: string): Promise<Resolved> {
  const [{ withApi }, { resolveDeployment, deploymentTargetOptions, stableNameOf }] = await Promise.all([
    import('../api-errors.js'),
    import('./deployment-target.js'),
  ]);
  const deployment = await withApi(ctx, (client) =>
    resolveDeployment(client, value, deploymentTargetOptions(ctx, { command })),
  );
  const name = stableNameOf(deployment);
  const id = deployment.deployment_id;
  const byId = value.trim().toLowerCase() === id.toLowerCase();
  if (deployment.status !== 'deployed' && (byId || name === undefined)) {
    throw new UserError(`${serviceText(id)} is ${deployment.status}: nothing serves it`, {
      hint:
        name === undefined
          ? '`mcpctl ls` shows which deployments run'
          : `\`mcpctl ${command} ${name}\` reaches the current deployment of ${name}, if one runs`,
    });
  }
  const mcpUrl = byId || name === undefined ? `${deployment.url.replace(/\/+$/, '')}/mcp` : stablePathUrl(deployment);
  return {
    mcpUrl,
    label: byId || name === undefined ? id : name,
    headers: {},
    authHelp: deploymentAuthHelp(deployment),
    close: async () => {},
  };
}

/** The stable URL in its path form, which resolves wherever the service does (docs/api.md, "Stable URLs"). */
function stablePathUrl(deployment: Deployment): string {
  const urls = deployment.stable_urls ?? [];
  return urls.find((url) => /\/d\/[^/]+\/mcp$/.test(url)) ?? urls[0] ?? `${deployment.url.replace(/\/+$/, '')}/mcp`;
}

function deploymentAuthHelp(deployment: Deployment): string | undefined {
  switch (deployment.auth?.type) {
    case 'bearer':
      return 'its token is the value its definition reads from a variable (given to the deployment with --env-var)';
    case 'oauth':
      return 'it takes an access token from its authorization server; the 401 names where clients find it';
    default:
      return undefined;
  }
}

/** A fetch that remembers the status, WWW-Authenticate and message of the last answer that failed. */
function watchFailures(failed: FailedAnswer): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.ok) {
      failed.status = response.status;
      failed.authenticate = response.headers.get('www-authenticate');
      failed.message = await messageOf(response.clone());
    }
    return response;
  };
}

/** The error text of a failed answer: a JSON-RPC error's message, a JSON `error`, or the start of the text. */
async function messageOf(response: Response): Promise<string | undefined> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string };
    const message = typeof body.error === 'string' ? body.error : body.error?.message;
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: the text itself
  }
  const trimmed = text.trim().slice(0, 200);
  return trimmed === '' ? undefined : trimmed;
}

interface FailureContext {
  resolved: Resolved;
  sentAuthorization: boolean;
  timeout: number;
}

/** What the client threw, as a UserError with the exit code a pipeline expects. */
function explainFailure(
  sdk: typeof ClientSdkModule,
  error: unknown,
  failed: FailedAnswer,
  { resolved, sentAuthorization, timeout }: FailureContext,
): unknown {
  if (error instanceof UserError) return error;
  const where = resolved.label === resolved.mcpUrl ? resolved.mcpUrl : `${resolved.label} (${resolved.mcpUrl})`;
  const said = failed.message === undefined ? '' : `: ${serviceText(failed.message)}`;
  if (error instanceof sdk.ProtocolError) {
    const invalid = Number(error.code) === Number(sdk.ProtocolErrorCode.InvalidParams);
    return new UserError(`${where} refused the request: ${serviceText(error.message)}`, {
      exitCode: invalid ? EXIT.usage : EXIT.transient,
      code: invalid ? 'invalid_params' : 'mcp_error',
      cause: error,
      ...(invalid ? { hint: '`mcpctl tools` shows the arguments each tool takes' } : {}),
    });
  }
  if (error instanceof sdk.SdkError && error.code === sdk.SdkErrorCode.RequestTimeout) {
    return new UserError(`${where} did not answer within ${formatSeconds(timeout / 1000) ?? ''}`, {
      exitCode: EXIT.transient,
      code: 'timeout',
      hint: 'wait longer with --timeout <seconds>, or check the server',
      cause: error,
    });
  }
  if (failed.status === 401) return unauthorized(where, said, failed, resolved, sentAuthorization, error);
  if (failed.status === 403) {
    return new UserError(`${where} refused the credential${said}`, {
      exitCode: EXIT.config,
      code: 'forbidden',
      hint: 'the token lacks a scope the server needs: get one that carries it',
      cause: error,
    });
  }
  if (failed.status !== undefined) {
    const status = failed.status;
    return new UserError(`${where} answered ${status}${said}`, {
      exitCode: status === 404 ? EXIT.usage : status >= 500 || status === 429 ? EXIT.transient : EXIT.usage,
      code: status === 404 ? 'not_found' : 'http_error',
      hint: status === 404 ? 'is it an MCP endpoint? URLs of MCP servers usually end in /mcp' : undefined,
      cause: error,
    });
  }
  return unreachable(error, where);
}

function unauthorized(
  where: string,
  said: string,
  failed: FailedAnswer,
  resolved: Resolved,
  sentAuthorization: boolean,
  cause: unknown,
): UserError {
  const metadata = /resource_metadata="([^"]+)"/.exec(failed.authenticate ?? '')?.[1];
  const hints = [
    sentAuthorization
      ? 'the token sent was refused (wrong or expired): send a valid one with --header "Authorization: Bearer <token>"'
      : 'send a token with --header "Authorization: Bearer <token>"',
  ];
  if (resolved.authHelp !== undefined) hints.push(resolved.authHelp);
  if (metadata !== undefined) hints.push(`its authorization server is named in ${serviceText(metadata)}`);
  return new UserError(`${where} needs a credential (401)${sentAuthorization ? said : ''}`, {
    exitCode: EXIT.config,
    code: 'unauthorized',
    hint: hints.join('; '),
    cause,
  });
}

/** Nothing answered: refused, unknown host, reset. */
function unreachable(error: unknown, where: string): UserError {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined;
  const code = cause === undefined ? undefined : (cause as NodeJS.ErrnoException).code;
  const reason =
    code === 'ECONNREFUSED'
      ? 'nothing listens there'
      : code === 'ENOTFOUND'
        ? 'the host name does not resolve'
        : serviceText(cause?.message ?? (error instanceof Error ? error.message : String(error)));
  return new UserError(`cannot reach ${where}: ${reason}`, {
    exitCode: EXIT.transient,
    code: 'unreachable',
    hint: 'check the URL, and that the server runs (`mcpctl dev <file>` serves a definition)',
    cause: error,
  });
}

/** Every tool the server lists (all pages); none when it offers no tools at all. */
export async function listTools(
  ctx: CommandContext,
  session: McpSession,
  timeoutSeconds: number,
): Promise<ClientSdkModule.Tool[]> {
  if (session.client.getServerCapabilities()?.tools === undefined) return [];
  const options = { timeout: Math.round(timeoutSeconds * 1000), signal: ctx.signal };
  return (await session.request((client) => client.listTools(undefined, options))).tools;
}

/** The width text is wrapped to: the terminal's, or 100 columns when stdout is not a terminal. */
export function terminalWidth(ctx: CommandContext): number {
  const { columns, isTTY } = ctx.io.stdout;
  return isTTY === true && columns !== undefined && columns > 0 ? Math.min(columns, 160) : 100;
}
