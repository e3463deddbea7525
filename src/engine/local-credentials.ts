/**
 * The credentials the engine uses itself: a build's check and a test run start the server on
 * 127.0.0.1 and call it as a client would, so a server with `auth` must let them in.
 *
 * - `bearer`: the token's variables get a random value for that one process, which the engine sends.
 * - `oauth`: no authorization server is asked. The engine holds a key of its own (ES256, in memory,
 *   made anew by every engine process and every hour), gives that process its public half
 *   (`MCPCTL_AUTH_LOCAL_JWKS`), and signs a token for it: issuer `urn:mcpctl:engine`, audience the
 *   process's own MCP URL, the test's user as subject, every scope the definition names, a few
 *   minutes of life. A deployed instance is never given the key, so such a token opens nothing else.
 */
import { randomBytes } from 'node:crypto';
import type * as JoseModule from 'jose';
import type { BuildRequest } from '../api/contract.js';
import { parseEnvRefs, resolveEnvRefs } from '../definition/interpolate.js';
import { LOCAL_ISSUER, LOCAL_JWKS_ENV } from '../runtime/server/auth.js';

const KEY_LIFETIME_MS = 60 * 60_000;
const TOKEN_LIFETIME_SECONDS = 10 * 60;
/** The subject of the engine's own tokens when a test names no user. */
export const LOCAL_SUBJECT = 'mcpctl-test';

type Jose = typeof JoseModule;
interface SigningKey {
  privateKey: JoseModule.CryptoKey;
  jwks: string;
  kid: string;
}

export interface LocalCredentials {
  /**
   * What a check or a test of `definition` needs: the variables its process starts with (on top of
   * `env`), and the Authorization header for its MCP URL once it listens.
   */
  prepare(
    definition: Pick<BuildRequest, 'auth' | 'tools'>,
    env: Record<string, string>,
    userId?: string,
  ): Promise<LocalAccess>;
}

export interface LocalAccess {
  env: Record<string, string>;
  /** the bearer token to send to the process listening at `mcpUrl`; undefined when it has no auth */
  token(mcpUrl: string): Promise<string | undefined>;
}

export interface LocalCredentialsOptions {
  /** how long one key is used before a new one is made; default an hour */
  keyLifetimeMs?: number;
  /** how long a token lives; default 10 minutes */
  tokenLifetimeSeconds?: number;
}

export function createLocalCredentials(
  clock: () => number = Date.now,
  options: LocalCredentialsOptions = {},
): LocalCredentials {
  const keyLifetimeMs = options.keyLifetimeMs ?? KEY_LIFETIME_MS;
  const tokenLifetimeSeconds = options.tokenLifetimeSeconds ?? TOKEN_LIFETIME_SECONDS;
  let jose: Promise<Jose> | undefined;
  let key: Promise<SigningKey> | undefined;
  let keyMadeAt = 0;
  const signingKey = (): Promise<SigningKey> => {
    if (key === undefined || clock() - keyMadeAt > keyLifetimeMs) {
      keyMadeAt = clock();
      key = (async () => {
        const { generateKeyPair, exportJWK } = await (jose ??= import('jose'));
        const pair = await generateKeyPair('ES256');
        const kid = randomBytes(8).toString('hex');
        const publicJwk = { ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256', use: 'sig' };
        return { privateKey: pair.privateKey, jwks: JSON.stringify({ keys: [publicJwk] }), kid };
      })();
    }
    return key;
  };

  return {
    async prepare(definition, baseEnv, userId) {
      const auth = definition.auth;
      const env = { ...baseEnv };
      if (auth === undefined || auth.type === 'none') return { env, token: async () => undefined };
      if (auth.type === 'bearer') {
        const first = auth.tokens?.[0] ?? auth.token ?? '';
        for (const value of auth.tokens ?? [auth.token ?? '']) {
          try {
            for (const part of parseEnvRefs(value))
              if (part.kind === 'ref') env[part.name] = randomBytes(16).toString('hex');
          } catch {
            // a malformed reference fails the start with its own message
          }
        }
        const token = resolveEnvRefs(first, env, 'auth.token');
        return { env, token: async () => token };
      }
      const signing = await signingKey();
      env[LOCAL_JWKS_ENV] = signing.jwks;
      const scopes = [...new Set([...auth.scopes, ...(definition.tools ?? []).flatMap((t) => t.scopes ?? [])])];
      const subject = userId ?? LOCAL_SUBJECT;
      const claim = auth.user_claim ?? 'sub';
      return {
        env,
        token: async (mcpUrl) => {
          const { SignJWT } = await (jose ??= import('jose'));
          return new SignJWT({ scope: scopes.join(' '), ...(claim === 'sub' ? {} : { [claim]: subject }) })
            .setProtectedHeader({ alg: 'ES256', kid: signing.kid, typ: 'at+jwt' })
            .setIssuer(LOCAL_ISSUER)
            .setAudience(mcpUrl)
            .setSubject(subject)
            .setIssuedAt()
            .setExpirationTime(Math.floor(clock() / 1000) + tokenLifetimeSeconds)
            .sign(signing.privateKey);
        },
      };
    },
  };
}
