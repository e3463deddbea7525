/** `auth`: its schema, the helpers, and the checks of what relies on it. */
import { describe, expect, it } from 'vitest';
import { authKind, bearerTokens, identityBearing } from '../../src/definition/auth.js';
import { checkDefinition } from '../../src/definition/check.js';
import { requiredEnvVars } from '../../src/definition/env-refs.js';
import { AuthConfig, ServerDefinition } from '../../src/definition/schema.js';
import { describeZodIssues } from '../../src/definition/zod-issues.js';
import { formatPath } from '../../src/shared/paths.js';

const OAUTH = { type: 'oauth', issuer: 'https://tenant.eu.auth0.com/', scopes: ['notes:read'] };
const tool = { name: 'greet', description: 'Greets the caller by name', inputSchema: { type: 'object' } };

/** The schema's problems with a definition of this auth (and tools), as the loader words them. */
function schemaProblems(auth: unknown, tools: unknown[] = [tool]): string[] {
  const input = { name: 'demo', template: 'basic', auth, tools };
  const parsed = ServerDefinition.safeParse(input);
  return parsed.success
    ? []
    : describeZodIssues(parsed.error.issues, input).map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
}

describe('auth schema', () => {
  it.each<[string, unknown]>([
    ['bearer with one token', { type: 'bearer', token: '${MCP_AUTH_TOKEN}' }],
    ['bearer with tokens for a rotation', { type: 'bearer', tokens: ['${TOKEN_NEW}', '${TOKEN_OLD}'] }],
    ['oauth with an https issuer', OAUTH],
    ['oauth with no scopes', { ...OAUTH, scopes: [] }],
    [
      'oauth with every field',
      {
        ...OAUTH,
        audience: 'https://notes.example.com/mcp',
        user_claim: 'email',
        jwks_uri: 'https://tenant.eu.auth0.com/.well-known/jwks.json',
      },
    ],
    ['oauth with an issuer from the environment', { ...OAUTH, issuer: '${AUTH_ISSUER}' }],
    ['oauth with part of the issuer from the environment', { ...OAUTH, issuer: 'http://${AUTH_HOST}/realms/notes' }],
    ['an http issuer on localhost', { ...OAUTH, issuer: 'http://localhost:8080/realms/dev' }],
    ['an http issuer on 127.0.0.1', { ...OAUTH, issuer: 'http://127.0.0.1:9000' }],
    ['an http issuer on [::1]', { ...OAUTH, issuer: 'http://[::1]:9000/' }],
    ['an http audience on a .localhost name', { ...OAUTH, audience: 'http://notes.production.localhost:47321/mcp' }],
    ['none', { type: 'none' }],
  ])('accepts %s', (_, auth) => {
    expect(schemaProblems(auth)).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    [
      'bearer without a token',
      { type: 'bearer' },
      'auth: bearer auth needs the token clients send: add token: ${MCP_AUTH_TOKEN}',
    ],
    [
      'both token and tokens',
      { type: 'bearer', token: '${A}', tokens: ['${B}'] },
      'auth.tokens: give either token (one secret) or tokens',
    ],
    ['an empty tokens list', { type: 'bearer', tokens: [] }, 'auth.tokens: list at least one token'],
    ['an empty token in tokens', { type: 'bearer', tokens: ['${A}', ''] }, 'auth.tokens[1]: must not be empty'],
    [
      'oauth without issuer',
      { type: 'oauth', scopes: [] },
      'auth.issuer: oauth auth needs issuer: the authorization server whose tokens are accepted, such as https://',
    ],
    [
      'oauth without scopes',
      { type: 'oauth', issuer: OAUTH.issuer },
      'auth.scopes: oauth auth needs scopes: those every request needs, such as [notes:read], or [] for none',
    ],
    [
      'an http issuer',
      { ...OAUTH, issuer: 'http://auth.example.com/' },
      'auth.issuer: http:// is accepted only for a loopback host',
    ],
    [
      'an http jwks_uri',
      { ...OAUTH, jwks_uri: 'http://auth.example.com/jwks' },
      'auth.jwks_uri: http:// is accepted only for a loopback host',
    ],
    [
      'an issuer that is no URL',
      { ...OAUTH, issuer: 'tenant.eu.auth0.com' },
      'auth.issuer: must be an absolute URL such as https://tenant.eu.auth0.com/',
    ],
    ['an empty audience', { ...OAUTH, audience: '' }, 'auth.audience: must be the aud your tokens carry'],
    [
      'an issuer with a query',
      { ...OAUTH, issuer: 'https://auth.example.com/?tenant=a' },
      'auth.issuer: an issuer has no query or fragment',
    ],
    ['an issuer that is no string', { ...OAUTH, issuer: 42 }, 'auth.issuer: expected string, got number'],
    ['a scope with a space', { ...OAUTH, scopes: ['notes:read notes:write'] }, 'auth.scopes[0]: must be one scope'],
    ['an empty user_claim', { ...OAUTH, user_claim: '' }, 'auth.user_claim: must be a claim name'],
    ['a bearer field on oauth', { ...OAUTH, token: '${T}' }, 'auth.token: unknown field "token"'],
    ['an unknown type', { type: 'basic' }, 'auth.type: must be one of bearer, oauth, none'],
  ])('refuses %s', (_, auth, message) => {
    const problems = schemaProblems(auth);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(message);
  });

  it('tells where to go when http is refused', () => {
    expect(schemaProblems({ ...OAUTH, issuer: 'http://auth.example.com/x' })[0]).toMatch(
      /use https:\/\/auth\.example\.com\/x$/,
    );
  });

  it.each<[string, unknown]>([
    ['scopes', ['notes:write']],
    ['no scopes', []],
  ])('accepts a tool with %s', (_, scopes) => {
    expect(schemaProblems(OAUTH, [{ ...tool, scopes }])).toEqual([]);
  });

  it('refuses a tool scope that is not one scope token', () => {
    expect(schemaProblems(OAUTH, [{ ...tool, scopes: ['a"b'] }])).toEqual([
      expect.stringMatching(/^tools\[0\]\.scopes\[0\]: must be one scope/),
    ]);
  });
});

describe('auth helpers', () => {
  const parse = (auth: unknown) => AuthConfig.parse(auth);
  it.each<[string, unknown, string[], boolean, string | undefined]>([
    ['no auth', undefined, [], false, undefined],
    ['bearer token', { type: 'bearer', token: '${A}' }, ['${A}'], false, 'bearer'],
    ['bearer tokens', { type: 'bearer', tokens: ['${A}', 'b'] }, ['${A}', 'b'], false, 'bearer'],
    ['oauth', OAUTH, [], true, 'oauth'],
    ['none', { type: 'none' }, [], false, 'none'],
  ])('%s', (_, raw, tokens, identity, kind) => {
    const auth = raw === undefined ? undefined : parse(raw);
    expect(bearerTokens(auth)).toEqual(tokens);
    expect(identityBearing(auth)).toBe(identity);
    expect(authKind(auth)).toBe(kind);
  });
});

type Def = Record<string, unknown>;

/** A server that relies on user.id: a resource only some users may read, a per-user one, and a tool that names the caller. */
function withUsers(auth: unknown): Def {
  return {
    name: 'demo',
    template: 'basic',
    ...(auth === undefined ? {} : { auth }),
    tools: [{ ...tool, handler: { type: 'static', content: [{ type: 'text', text: 'hello {{user.id}}' }] } }],
    resources: [
      {
        uri: 'docs://board',
        name: 'board',
        description: 'Board notes',
        users: ['alice'],
        source: { type: 'text', text: 'minutes' },
      },
      {
        uri: 'profile://me',
        name: 'me',
        description: 'My profile',
        per_user: true,
        source: { type: 'text', text: 'user {{user.id}}' },
      },
    ],
    prompts: [{ name: 'hi', messages: [{ role: 'user', content: 'I am {{user.id}}' }] }],
  };
}

function issues(def: Def): string[] {
  return checkDefinition(def).map((issue) => `${issue.severity} ${formatPath(issue.path)}: ${issue.message}`);
}

describe('checks of what relies on auth', () => {
  const USER_PATHS = [
    'resources[0].users',
    'resources[1].per_user',
    'tools[0].handler.content[0].text',
    'prompts[0].messages[0].content',
  ];

  it.each<[string, unknown, RegExp, RegExp]>([
    [
      'no auth',
      undefined,
      /user\.id comes from the client here \(X-MCP-User-Id or _meta "mcpctl\/user_id"\), which any caller can set/,
      /not access control|anyone can read anyone's/,
    ],
    [
      'auth type none',
      { type: 'none' },
      /user\.id comes from the client here/,
      /not access control|anyone can read anyone's/,
    ],
    [
      'bearer auth',
      { type: 'bearer', token: '${T}' },
      /a bearer token names no user, and with auth the server ignores X-MCP-User-Id: over HTTP, user\.id is empty/,
      /no one can read it|reading it fails|empty;/,
    ],
  ])('warns, with %s, at each use of user.id', (_, auth, reason, consequence) => {
    const found = checkDefinition(withUsers(auth));
    expect(found.map((issue) => `${issue.severity} ${formatPath(issue.path)}`)).toEqual(
      USER_PATHS.map((path) => `warning ${path}`),
    );
    for (const issue of found) {
      expect(issue.message).toMatch(reason);
      expect(issue.message).toMatch(consequence);
      expect(issue.message).toMatch(/use auth: \{ type: oauth \} so user\.id comes from a validated token$/);
    }
  });

  it('says nothing of user.id with oauth, whose issuer may be written as is', () => {
    expect(issues(withUsers(OAUTH))).toEqual([]);
  });

  it('leaves an auth of an unknown type to the schema', () => {
    expect(issues(withUsers({ type: 'basic' }))).toEqual([]);
  });

  it.each<[string, unknown]>([
    ['no auth', undefined],
    ['auth type none', { type: 'none' }],
    ['bearer auth', { type: 'bearer', token: '${T}' }],
  ])('refuses tool scopes with %s', (_, auth) => {
    const def: Def = {
      name: 'demo',
      template: 'basic',
      ...(auth === undefined ? {} : { auth }),
      tools: [{ ...tool, scopes: ['notes:write'] }],
    };
    const found = issues(def);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^error tools\[0\]\.scopes: tool scopes are checked against an OAuth access token/);
    expect(found[0]).toMatch(/declare auth: \{ type: oauth, issuer: …, scopes: \[\] \}, or remove scopes$/);
  });

  it('accepts tool scopes with oauth, and an empty list with any auth', () => {
    expect(
      issues({ name: 'demo', template: 'basic', auth: OAUTH, tools: [{ ...tool, scopes: ['notes:write'] }] }),
    ).toEqual([]);
    expect(issues({ name: 'demo', template: 'basic', tools: [{ ...tool, scopes: [] }] })).toEqual([]);
  });

  it.each<[string, unknown, string[]]>([
    ['a literal token', { type: 'bearer', token: 'hunter2hunter2' }, ['auth.token']],
    [
      'literal tokens, each at its place',
      { type: 'bearer', tokens: ['${TOKEN_NEW}', 'hunter2', 'hunter3'] },
      ['auth.tokens[1]', 'auth.tokens[2]'],
    ],
  ])('warns about %s', (_, auth, paths) => {
    const found = checkDefinition({ name: 'demo', template: 'basic', auth, tools: [tool] });
    expect(found.map((issue) => formatPath(issue.path))).toEqual(paths);
    for (const issue of found)
      expect(issue).toMatchObject({
        severity: 'warning',
        message: expect.stringMatching(/^a literal token: .* use \$\{MCP_AUTH_TOKEN\}/),
      });
  });

  it('lists the variables of every auth field the server resolves', () => {
    expect(requiredEnvVars({ auth: { type: 'bearer', tokens: ['${TOKEN_NEW}', '${TOKEN_OLD:-}'] } })).toEqual([
      { name: 'TOKEN_NEW', field: 'auth.tokens[0]' },
    ]);
    const oauth = {
      ...OAUTH,
      issuer: 'https://${TENANT}.eu.auth0.com/',
      audience: '${AUDIENCE}',
      jwks_uri: '${JWKS_URI}',
      user_claim: '${NOT_RESOLVED}',
    };
    expect(requiredEnvVars({ auth: oauth })).toEqual([
      { name: 'TENANT', field: 'auth.issuer' },
      { name: 'AUDIENCE', field: 'auth.audience' },
      { name: 'JWKS_URI', field: 'auth.jwks_uri' },
    ]);
  });

  it('reports a malformed ${...} in an auth field', () => {
    expect(
      issues({
        name: 'demo',
        template: 'basic',
        auth: { ...OAUTH, issuer: 'https://${TENANT.example.com/' },
        tools: [tool],
      }),
    ).toEqual([expect.stringMatching(/^error auth\.issuer: unclosed \$\{/)]);
  });
});
