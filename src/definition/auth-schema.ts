/**
 * The schema of `auth`: who may call a server (bearer tokens, OAuth access tokens, or anyone on
 * purpose), and the OAuth scope of a tool. Built by schema-builders.ts when a definition has them.
 * Pure: no IO.
 */
import { z } from 'zod';

/** An OAuth scope (RFC 6749 scope-token): printable ASCII without spaces, quotes or backslashes. */
export const scopeToken = z
  .string()
  .regex(
    /^[\x21\x23-\x5B\x5D-\x7E]+$/,
    'must be one scope, such as notes:read: no spaces, " or \\ (list several scopes as several items)',
  );

/** A bearer token as written: a `${VAR}` reference (a literal is a warning of the semantic checks). */
const bearerToken = z.string().min(1, 'must not be empty');

function bearerAuth() {
  return (
    z
      .strictObject({
        type: z.literal('bearer'),
        token: bearerToken
          .optional()
          .describe(
            'the token clients must send; a ${VAR} reference such as ${MCP_AUTH_TOKEN}, never a literal secret',
          ),
        tokens: z
          .array(bearerToken)
          .min(1, 'list at least one token')
          .optional()
          .describe(
            'several tokens accepted at once, to rotate without downtime (add the new one, move the clients, remove the old); ${VAR} references',
          ),
      })
      .superRefine((auth, ctx) => {
        if (auth.token !== undefined && auth.tokens !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['tokens'],
            message:
              'give either token (one secret) or tokens (several, during a rotation), not both: move token into tokens',
          });
        } else if (auth.token === undefined && auth.tokens === undefined) {
          ctx.addIssue({
            code: 'custom',
            message:
              'bearer auth needs the token clients send: add token: ${MCP_AUTH_TOKEN} (or tokens: [...] for several)',
          });
        }
      })
      // for editors: exactly one of the two (zod's own check is the refinement above)
      .meta({
        description:
          'clients send Authorization: Bearer <token>; one of the listed tokens must match. A shared secret: it names no user',
        oneOf: [{ required: ['token'] }, { required: ['tokens'] }],
      })
  );
}

/** Hosts that never leave this machine: the only ones an http:// auth URL may name. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '[::1]';
}

/**
 * An absolute https:// URL of the authorization side (http:// only for a loopback host), or one
 * that takes a part from the environment, which is checked once resolved.
 */
function authUrl(example: string, { issuer = false, missing }: { issuer?: boolean; missing?: string } = {}) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? missing : undefined) })
    .superRefine((value, ctx) => {
      if (value.includes('${')) return;
      const problem = authUrlProblem(value, example, issuer);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .meta({ pattern: AUTH_URL_PATTERN });
}

/** What authUrl refuses, for editors (the messages come from authUrlProblem). */
const AUTH_URL_PATTERN =
  '^(?:https://[^/?#\\s]+.*|http://(?:localhost|[A-Za-z0-9.-]+\\.localhost|127(?:\\.\\d{1,3}){3}|\\[::1\\])(?::\\d+)?(?:[/?#].*)?|.*\\$\\{.*)$';

function authUrlProblem(value: string, example: string, issuer: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `must be an absolute URL such as ${example} (or a \${VAR} reference)`;
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    const https = `https://${value.slice('http://'.length)}`;
    return `http:// is accepted only for a loopback host (localhost, 127.0.0.1, [::1]): tokens and keys would cross the network unprotected; use ${https}`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return `must be an https:// URL such as ${example}, not ${url.protocol}`;
  if (issuer && (url.search !== '' || url.hash !== ''))
    return 'an issuer has no query or fragment (RFC 8414): write it as its tokens carry it in iss';
  return undefined;
}

function oauthAuth() {
  return z
    .strictObject({
      type: z.literal('oauth'),
      issuer: authUrl('https://tenant.eu.auth0.com/', {
        issuer: true,
        missing:
          'oauth auth needs issuer: the authorization server whose tokens are accepted, such as https://tenant.eu.auth0.com/',
      }).describe(
        'the authorization server whose tokens are accepted, as its tokens name it in iss, such as https://tenant.eu.auth0.com/; may use ${VAR}',
      ),
      audience: z
        .string()
        .min(
          1,
          'must be the aud your tokens carry, such as https://notes.example.com/mcp, api://notes or an application id',
        )
        .optional()
        .describe(
          "the aud a token must carry, as your authorization server sets it (a URL, Okta's api://default, Entra's application id); default: the URL the server is reached at (the deployment's own and stable URLs)",
        ),
      scopes: z
        .array(scopeToken, {
          error: (issue) =>
            issue.input === undefined
              ? 'oauth auth needs scopes: those every request needs, such as [notes:read], or [] for none'
              : undefined,
        })
        .describe('scopes every request needs, all of them, such as [notes:read]; [] for none'),
      user_claim: z
        .string()
        .regex(/^\S+$/, 'must be a claim name such as sub, email or oid')
        .optional()
        .describe('the token claim that becomes user.id; default sub'),
      jwks_uri: authUrl('https://tenant.eu.auth0.com/.well-known/jwks.json')
        .optional()
        .describe(
          "where the issuer publishes its signing keys (a JWKS); default: from the issuer's OAuth (RFC 8414) or OpenID discovery document",
        ),
    })
    .describe(
      'clients send an OAuth access token (a JWT) from the issuer; the server checks its signature, issuer, audience, expiry and scopes, and user.id comes from it',
    );
}

function noAuth() {
  return z
    .strictObject({ type: z.literal('none') })
    .describe(
      'no authentication, on purpose: anyone who reaches the server may call it (a deploy beyond this machine is then marked public)',
    );
}

export function authConfigSchema() {
  return z
    .discriminatedUnion('type', [bearerAuth(), oauthAuth(), noAuth()])
    .describe(
      'who may call the MCP endpoint: bearer (shared tokens), oauth (tokens of an authorization server, with a user identity) or none',
    );
}
