/**
 * What a definition's `auth` means for the rest of it: the tokens a bearer server accepts, whether
 * callers have a verified identity, and the checks of what relies on one (`users`, `per_user`,
 * `{{user.id}}`, tool `scopes`). Pure.
 */
import type { AuthConfig } from './schema.js';
import { parseTemplateRefs } from './template.js';
import { listTemplateFields } from './template-refs.js';
import { asArray, asRecord, asString, items, type CheckContext, type Path } from './walk.js';

export type AuthKind = AuthConfig['type'];
export type BearerAuthConfig = Extract<AuthConfig, { type: 'bearer' }>;
export type OAuthConfig = Extract<AuthConfig, { type: 'oauth' }>;

/** The fields of `auth` whose `${VAR}` references the server resolves when it starts. */
export const AUTH_ENV_FIELDS = ['token', 'tokens', 'issuer', 'audience', 'jwks_uri'] as const;

/** The tokens a bearer server accepts, as written (`${VAR}` references unresolved); [] unless bearer. */
export function bearerTokens(auth: AuthConfig | undefined): string[] {
  if (auth?.type !== 'bearer') return [];
  return auth.tokens ?? (auth.token === undefined ? [] : [auth.token]);
}

/** True when a caller's user.id comes from a validated token (oauth), not from what the client says. */
export function identityBearing(auth: AuthConfig | undefined): boolean {
  return auth?.type === 'oauth';
}

/** The kind of auth a definition declares; undefined when it has none. */
export function authKind(auth: AuthConfig | undefined): AuthKind | undefined {
  return auth?.type;
}

// ---------------------------------------------------------------------------------------------
// Semantic checks (raw YAML, read defensively)

const KINDS: readonly string[] = ['bearer', 'oauth', 'none'] satisfies AuthKind[];

/**
 * Tool `scopes` need oauth (error: they would silently protect nothing); what relies on user.id
 * without oauth is a warning, since the id is then no proof of who calls.
 */
export function checkAuth({ def, error, warn }: CheckContext): void {
  const auth = asRecord(def.auth);
  const type = auth === undefined ? undefined : asString(auth.type);
  // an auth of an unknown type is the schema's problem: no guess here about what it would mean
  if (auth !== undefined && (type === undefined || !KINDS.includes(type))) return;
  if (type === 'oauth') return;

  const current = type === undefined ? 'a server without auth' : `auth type ${type}`;
  for (const [i, tool] of items(def.tools)) {
    if (asArray(tool.scopes).length === 0) continue;
    error(
      ['tools', i, 'scopes'],
      `tool scopes are checked against an OAuth access token, which ${current} does not ask for, so anyone who may call the server could call this tool: ` +
        'declare auth: { type: oauth, issuer: …, scopes: [] }, or remove scopes',
    );
  }

  const said = type === 'bearer' ? BEARER_SAYS : CLIENT_SAYS;
  for (const [i, resource] of items(def.resources)) {
    if (resource.users !== undefined) warn(['resources', i, 'users'], said.users);
    else if (resource.per_user === true) warn(['resources', i, 'per_user'], said.perUser);
  }
  for (const path of userIdFields(def)) warn(path, said.template);
}

const USE_OAUTH = 'use auth: { type: oauth } so user.id comes from a validated token';

/** Without auth (or with none), user.id is what the client says. */
const FROM_CLIENT =
  'user.id comes from the client here (X-MCP-User-Id or _meta "mcpctl/user_id"), which any caller can set';
const CLIENT_SAYS = {
  users: `the users list limits who may read this resource, but ${FROM_CLIENT}: this is not access control; ${USE_OAUTH}`,
  perUser: `the content depends on user.id, but ${FROM_CLIENT}: anyone can read anyone's; ${USE_OAUTH}`,
  template: `{{user.id}}: ${FROM_CLIENT}, so it is not access control; ${USE_OAUTH}`,
};

/** With bearer auth, a token names no user and what the client says is ignored: there is no user.id over HTTP. */
const NO_USER =
  'a bearer token names no user, and with auth the server ignores X-MCP-User-Id: over HTTP, user.id is empty';
const BEARER_SAYS = {
  users: `the users list limits who may read this resource, but ${NO_USER}, so no one can read it; ${USE_OAUTH}`,
  perUser: `the content depends on user.id, but ${NO_USER}, so reading it fails; ${USE_OAUTH}`,
  template: `{{user.id}}: ${NO_USER}; ${USE_OAUTH}`,
};

/** Tool and prompt fields that render `{{user.id}}` (a resource's are covered by its per_user). */
function userIdFields(def: Record<string, unknown>): Path[] {
  return listTemplateFields(def)
    .filter((field) => field.scope !== 'resource' && field.text.includes('{{'))
    .filter((field) => parseTemplateRefs(field.text).refs.some((ref) => ref.root === 'user'))
    .map((field) => field.path);
}
