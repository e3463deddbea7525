/**
 * What `mcpctl dev` says about who may call the served definition: what a client must send, and
 * where OAuth clients find the authorization server. The runtime does the checking (auth.ts).
 */
import type { AuthConfig } from '../../definition/schema.js';
import type * as InterpolateModule from '../../definition/interpolate.js';
import type { CommandContext } from '../context.js';

type Interpolate = Pick<typeof InterpolateModule, 'listEnvRefs' | 'resolveEnvRefs'>;

/** Who may call the served definition, as far as a person connecting a client needs to know. */
export type DevAuth =
  | {
      type: 'bearer';
      /** the variables (or fields) the tokens come from */
      from: string[];
    }
  | {
      type: 'oauth';
      issuer: string;
      scopes: string[];
      /** the scopes a tool needs besides `scopes` */
      toolScopes: Array<[string, string[]]>;
      audience?: string;
      userClaim: string;
    };

/**
 * What a client of the definition must send. The runtime checks it (the same check as a deployed
 * instance's); this only says it. The URLs are resolved as the runtime resolved them: it started.
 */
export function describeAuth(
  auth: AuthConfig | undefined,
  tools: ReadonlyArray<{ name: string; scopes?: string[] | undefined }>,
  interpolate: Interpolate,
  env: CommandContext['io']['env'],
): DevAuth | undefined {
  if (auth === undefined || auth.type === 'none') return undefined;
  if (auth.type === 'bearer') {
    const written = auth.tokens ?? (auth.token === undefined ? [] : [auth.token]);
    const from = written.flatMap((token, i) => {
      const vars = interpolate.listEnvRefs(token);
      return vars.length > 0 ? vars : [auth.tokens === undefined ? 'auth.token' : `auth.tokens[${i}]`];
    });
    return { type: 'bearer', from: [...new Set(from)] };
  }
  return {
    type: 'oauth',
    issuer: interpolate.resolveEnvRefs(auth.issuer, env, 'auth.issuer'),
    scopes: auth.scopes,
    toolScopes: tools.filter((t) => t.scopes !== undefined && t.scopes.length > 0).map((t) => [t.name, t.scopes!]),
    ...(auth.audience === undefined
      ? {}
      : { audience: interpolate.resolveEnvRefs(auth.audience, env, 'auth.audience') }),
    userClaim: auth.user_claim ?? 'sub',
  };
}

/** The rows that say who may call. */
export function authFields(
  auth: DevAuth | undefined,
  metadataUrl: string | undefined,
): Array<[string, string | undefined]> {
  if (auth === undefined) return [];
  if (auth.type === 'bearer') return [['auth', `bearer token from ${auth.from.join(', ')}`]];
  const toolScopes = auth.toolScopes.map(([tool, scopes]) => `${tool} also needs ${scopes.join(' ')}`);
  return [
    ['auth', 'oauth'],
    ['issuer', auth.issuer],
    ['scopes', [auth.scopes.length === 0 ? 'none required' : auth.scopes.join(' '), ...toolScopes].join('; ')],
    ['metadata', metadataUrl],
  ];
}
