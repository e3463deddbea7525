/**
 * `mcpctl dev` of a definition with `auth`: the served definition checks tokens as a deployed
 * instance does (a real authorization server on loopback issues them), and the banner says what a
 * client must send and where OAuth clients discover the authorization server.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthorizationServer, type AuthorizationServer } from '../support/authorization-server.js';
import { startDev } from '../support/dev-session.js';
import { FIXTURES, connect, firstText, makeTempDir } from '../support/runtime.js';

let as: AuthorizationServer;
beforeAll(async () => {
  as = await startAuthorizationServer();
});
afterAll(() => as?.close());

/** The dev fixture with `auth` (YAML lines) and the tool `hello` needing `toolScope`. */
async function definitionWith(root: string, auth: string, toolScope?: string): Promise<string> {
  await cp(join(FIXTURES, 'dev'), join(root, 'dev'), { recursive: true });
  const file = join(root, 'dev', 'server.yaml');
  let source = (await readFile(file, 'utf8')).replace('template: basic\n', `template: basic\n${auth}`);
  if (toolScope !== undefined)
    source = source.replace(
      '    description: Says hello.\n',
      `    description: Says hello.\n    scopes: [${toolScope}]\n`,
    );
  await writeFile(file, source);
  return file;
}

const OAUTH = 'auth:\n  type: oauth\n  issuer: ${ISSUER}\n  scopes: [notes:read]\n';

function toolsCall(mcpUrl: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'hello', arguments: { name: 'Ann' } },
    }),
  });
}

describe('mcpctl dev with oauth', () => {
  it('refuses a request without a token (401 pointing at the metadata), serves the metadata, and takes user.id from the token alone', async () => {
    await using temp = await makeTempDir();
    const file = await definitionWith(temp.path, OAUTH, 'notes:write');
    await using dev = startDev([file, '--port', '0', '--user-id', 'zoe'], { env: { ISSUER: as.issuer } });
    const [, mcpUrl] = await dev.waitFor(/MCP URL\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    await dev.waitFor(/watching/);
    const metadataUrl = `${new URL(mcpUrl!).origin}/.well-known/oauth-protected-resource/mcp`;
    const banner = dev.stdout();
    expect(banner).toMatch(/auth\s+oauth\n/);
    expect(banner).toMatch(new RegExp(`issuer\\s+${as.issuer}\\n`));
    expect(banner).toMatch(/scopes\s+notes:read; hello also needs notes:write\n/);
    expect(banner).toMatch(new RegExp(`metadata\\s+${metadataUrl}\\n`));
    expect(banner).toContain('(Claude, the MCP Inspector) discover the authorization server from the 401');
    expect(banner).toContain('send this development token of user zoe (this server accepts it for 12 h; no other does');

    const refused = await toolsCall(mcpUrl!);
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain(`resource_metadata="${metadataUrl}"`);
    expect(challenge).toContain('scope="notes:read"');

    const metadata = await fetch(metadataUrl);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({
      resource: mcpUrl,
      authorization_servers: [as.issuer],
      scopes_supported: ['notes:read', 'notes:write'],
      bearer_methods_supported: ['header'],
    });

    // a token for another resource is refused like none, with the reason
    const elsewhere = await as.token({ clientId: 'alice', resource: 'http://127.0.0.1:1/mcp' });
    const wrongAudience = await toolsCall(mcpUrl!, { authorization: `Bearer ${elsewhere}` });
    expect(wrongAudience.status).toBe(401);
    expect(wrongAudience.headers.get('www-authenticate')).toContain('error="invalid_token"');

    // bob may read but not write: the tool's own scope is missing
    const bob = await as.token({ clientId: 'bob', resource: mcpUrl! });
    const forbidden = await toolsCall(mcpUrl!, { authorization: `Bearer ${bob}` });
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get('www-authenticate')).toMatch(
      /error="insufficient_scope".*scope="notes:read notes:write"/,
    );

    // alice's token: the call goes through, and the caller is alice, not --user-id nor the header
    const alice = await as.token({ clientId: 'alice', resource: mcpUrl! });
    await using client = await connect(mcpUrl!, {
      headers: { authorization: `Bearer ${alice}`, 'X-MCP-User-Id': 'mallory' },
    });
    expect(firstText(await client.callTool({ name: 'hello', arguments: { name: 'Ann' } }))).toBe('Hello, Ann!');
    await dev.waitFor(/tools\/call hello {2}200 {2}[\d.]+ ms {2}user=alice/);
    expect(dev.stdout()).not.toMatch(/user=(zoe|mallory)/);
    expect(await dev.stop()).toBe(0);
  });

  it('--json: auth is oauth, with the metadata URL and a development token that this dev server alone accepts', async () => {
    await using temp = await makeTempDir();
    const file = await definitionWith(temp.path, OAUTH);
    await using dev = startDev([file, '--port', '0', '--json'], { env: { ISSUER: as.issuer } });
    await dev.waitFor(/^\}$/m);
    const result = JSON.parse(dev.stdout()) as Record<string, unknown>;
    expect(result.auth).toBe('oauth');
    expect(result.resource_metadata).toBe(
      `${new URL(result.mcp_url as string).origin}/.well-known/oauth-protected-resource/mcp`,
    );
    expect(result.dev_user).toBe('dev');
    const token = result.dev_token as string;
    expect((await toolsCall(result.mcp_url as string, { authorization: `Bearer ${token}` })).status).toBe(200);
    await dev.waitFor(/"user_id":"dev"/, 'stderr');

    // another dev server of the same file has a key of its own: the first one's token opens nothing there
    await using other = startDev([file, '--port', '0', '--json'], { env: { ISSUER: as.issuer } });
    await other.waitFor(/^\}$/m);
    const second = JSON.parse(other.stdout()) as Record<string, unknown>;
    const refused = await toolsCall(second.mcp_url as string, { authorization: `Bearer ${token}` });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(await other.stop()).toBe(0);
    expect(await dev.stop()).toBe(0);
  });
});

describe('mcpctl dev with bearer tokens or none', () => {
  it('bearer tokens for rotation: names the variables they come from, never the values', async () => {
    await using temp = await makeTempDir();
    const file = await definitionWith(temp.path, 'auth:\n  type: bearer\n  tokens: ["${TOKEN_NEW}", "${TOKEN_OLD}"]\n');
    await using dev = startDev([file, '--port', '0', '--json'], {
      env: { TOKEN_NEW: 'new-token-0123456789', TOKEN_OLD: 'old-token-0123456789' },
    });
    await dev.waitFor(/^\}$/m);
    const result = JSON.parse(dev.stdout()) as Record<string, unknown>;
    expect(result.auth).toBe('bearer');
    expect(result).not.toHaveProperty('resource_metadata');
    for (const token of ['new-token-0123456789', 'old-token-0123456789']) {
      expect((await toolsCall(result.mcp_url as string, { authorization: `Bearer ${token}` })).status).toBe(200);
    }
    expect((await toolsCall(result.mcp_url as string, { authorization: 'Bearer other-token' })).status).toBe(401);
    expect(await dev.stop()).toBe(0);

    await using human = startDev([file, '--port', '0'], {
      env: { TOKEN_NEW: 'new-token-0123456789', TOKEN_OLD: 'old-token-0123456789' },
    });
    await human.waitFor(/watching/);
    expect(human.stdout()).toMatch(/auth\s+bearer token from TOKEN_NEW, TOKEN_OLD\n/);
    expect(human.stdout()).toContain('clients must send one of the bearer tokens (TOKEN_NEW, TOKEN_OLD)');
    expect(human.stdout()).not.toContain('token-0123456789');
    expect(await human.stop()).toBe(0);
  });

  it('auth: none serves anyone, with nothing to say about it', async () => {
    await using temp = await makeTempDir();
    const file = await definitionWith(temp.path, 'auth: { type: none }\n');
    await using dev = startDev([file, '--port', '0', '--json']);
    await dev.waitFor(/^\}$/m);
    const result = JSON.parse(dev.stdout()) as Record<string, unknown>;
    expect(result.auth).toBeNull();
    expect((await toolsCall(result.mcp_url as string)).status).toBe(200);
    expect(await dev.stop()).toBe(0);
  });
});
