// The adversary's client scenarios: callers that claim someone else's identity (or none) on an
// OAuth server, and a flood of anonymous sessions before a real MCP client arrives.
/* global TextEncoder, AbortController */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { base64url, exportJWK, exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { Agent, fetch as undiciFetch } from 'undici';
import {
  api,
  cleanHome,
  deploy,
  engineState,
  listen,
  newHome,
  post,
  startEngine,
  toolAnswer,
  writeServer,
} from './chaos-support.js';

/** An issuer on loopback that publishes one key, and the means to sign tokens right and wrong. */
async function startIssuer() {
  const kid = randomUUID();
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const other = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const publicPem = await exportSPKI(publicKey);
  const server = await listen((req, res) => {
    if (req.url === '/jwks')
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    else res.writeHead(404).end();
  });
  const issuer = server.url;
  // tokens are for the deployment's own URL (the default audience), known once it is deployed
  let audience = '';
  const claims = (sub, extra = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return { iss: issuer, aud: audience, sub, iat: now, exp: now + 600, ...extra };
  };
  const sign = (payload, key = privateKey, header = { alg: 'RS256', kid, typ: 'at+jwt' }) =>
    new SignJWT(payload).setProtectedHeader(header).sign(key);
  const encode = (value) => base64url.encode(JSON.stringify(value));
  return {
    issuer,
    close: server.close,
    setAudience: (value) => (audience = value),
    valid: (sub) => sign(claims(sub)),
    algNone: (sub) => `${encode({ alg: 'none', typ: 'at+jwt' })}.${encode(claims(sub))}.`,
    otherKey: (sub) => sign(claims(sub), other.privateKey),
    hmacWithPublicKey: (sub) => sign(claims(sub), new TextEncoder().encode(publicPem), { alg: 'HS256', kid }),
    expired: (sub) =>
      sign(claims(sub, { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 })),
    otherAudience: (sub) => sign(claims(sub, { aud: 'another-server' })),
    otherIssuer: (sub) => sign(claims(sub, { iss: 'https://issuer.invalid' })),
  };
}

/** Calls that claim `admin` (or nobody) on an OAuth server where only alice has a token. */
export async function spoofedIdentity() {
  const home = newHome('identity');
  const issuer = await startIssuer();
  try {
    await startEngine(home);
    const file = writeServer(join(home, 'def'), [
      'name: guarded',
      'template: basic',
      'description: A server that tells callers who they are',
      `auth: { type: oauth, issuer: ${JSON.stringify(issuer.issuer)}, scopes: [], jwks_uri: ${JSON.stringify(`${issuer.issuer}/jwks`)} }`,
      'tools:',
      '  - name: whoami',
      '    description: Says who the caller is',
      '    inputSchema: { type: object }',
      '    handler: { type: static, content: [{ type: text, text: "user=[{{user.id}}]" }] }',
    ]);
    const deployment = await deploy(home, file, 'staging');
    issuer.setAudience(`${deployment.url}/mcp`);
    const alice = await issuer.valid('alice');
    const bearer = (token) => ({ authorization: `Bearer ${token}` });
    const spoofHeader = { 'x-mcp-user-id': 'admin' };
    const metaAdmin = { _meta: { 'mcpctl/user_id': 'admin' } };
    const attempts = [
      ['alice + X-MCP-User-Id: admin', { ...bearer(alice), ...spoofHeader }],
      ['alice + _meta user id admin', bearer(alice), metaAdmin],
      ['no token + X-MCP-User-Id: admin', spoofHeader],
      ['no token + _meta user id admin', {}, metaAdmin],
      ['a token that is no JWT', bearer('not-a-token')],
      ['alg none, sub admin', bearer(issuer.algNone('admin'))],
      ['signed by another key with the right kid, sub admin', bearer(await issuer.otherKey('admin'))],
      ['HS256 keyed with the public key, sub admin', bearer(await issuer.hmacWithPublicKey('admin'))],
      ['expired, sub admin', bearer(await issuer.expired('admin'))],
      ['for another audience, sub admin', bearer(await issuer.otherAudience('admin'))],
      ['from another issuer, sub admin', bearer(await issuer.otherIssuer('admin'))],
    ];
    // the gateway, and the instance itself (the resource server) around it
    const state = engineState(home);
    const status = await api(state, 'GET', `/v1/deploy/${deployment.deployment_id}/status`);
    const ports = (status.body?.data?.instances ?? deployment.instances ?? [])
      .map((i) => i.port)
      .filter((p) => typeof p === 'number');
    const urls = [`${deployment.url}/mcp`, ...ports.slice(0, 1).map((port) => `http://127.0.0.1:${port}/mcp`)];
    const ask = async (url, headers, params = {}) =>
      toolAnswer(
        (
          await post(
            url,
            { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {}, ...params } },
            headers,
          )
        ).text,
      );
    const controls = [];
    const accepted = [];
    let calls = 0;
    for (const url of urls) {
      controls.push((await ask(url, bearer(alice))).text);
      for (const [label, headers, params] of attempts) {
        calls += 1;
        const answer = await ask(url, headers, params);
        const asAlice = label.startsWith('alice') && answer.text === 'user=[alice]';
        if (answer.answered && !asAlice)
          accepted.push(`${label} (${url === urls[0] ? 'gateway' : 'instance'}): ${answer.text.slice(0, 60)}`);
      }
    }
    const controlOk = controls.every((text) => text === 'user=[alice]');
    return {
      scenario: `spoofed identity on an OAuth server: ${attempts.length} forged, missing or spoofed credentials, through the gateway and to the instance`,
      result: `${accepted.length} of ${calls} calls answered as another identity or without a valid token; alice's own token: ${controlOk ? 'answered as alice' : JSON.stringify(controls)}`,
      target: '0',
      met: accepted.length === 0 && controlOk,
      notes: [
        ...(urls.length === 1 ? ["the instance's port is unknown: only the gateway tried"] : []),
        ...accepted.slice(0, 5),
      ],
    };
  } finally {
    await cleanHome(home);
    await issuer.close();
  }
}

/** What `run` resolves with, or an error when it takes longer than `ms`. */
async function withDeadline(ms, run) {
  const timer = new AbortController();
  try {
    return await Promise.race([
      run(),
      setTimeout(ms, undefined, { signal: timer.signal }).then(() =>
        Promise.reject(new Error(`no answer within ${ms / 1000} s`)),
      ),
    ]);
  } finally {
    timer.abort();
  }
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1.0.0' } },
};

/** 1,000 anonymous `initialize` from 127.0.0.1, then a real MCP client from 127.0.0.2 starts a session and calls a tool. */
export async function sessionFlooding() {
  const home = newHome('flooding');
  const agent = new Agent({ localAddress: '127.0.0.2' });
  try {
    await startEngine(home);
    const file = writeServer(join(home, 'def'), [
      'name: sessions',
      'template: basic',
      'description: A server with sessions',
      'sessions: true',
      'tools:',
      '  - name: greet',
      '    description: Greets someone by name',
      '    inputSchema: { type: object, properties: { name: { type: string } }, required: [name] }',
      '    handler: { type: static, content: [{ type: text, text: "Hello {{args.name}}" }] }',
    ]);
    const deployment = await deploy(home, file, 'staging');
    const mcpUrl = `${deployment.url}/mcp`;
    const statuses = new Map();
    let sent = 0;
    const worker = async () => {
      while (sent < 1000) {
        sent += 1;
        const answer = await post(mcpUrl, INITIALIZE, {}, { localAddress: '127.0.0.1' });
        const key =
          answer.status === 200 && answer.headers['mcp-session-id'] !== undefined ? 'session' : String(answer.status);
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 20 }, worker));

    const client = new Client({ name: 'chaos-real-client', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
      fetch: (url, init) => undiciFetch(url, { ...init, dispatcher: agent }),
    });
    let outcome;
    try {
      outcome = await withDeadline(60_000, async () => {
        await client.connect(transport);
        const result = await client.callTool({ name: 'greet', arguments: { name: 'real client' } });
        return {
          ok: result.content?.[0]?.text === 'Hello real client',
          detail: transport.sessionId === undefined ? 'no session id' : 'a session',
        };
      });
    } catch (error) {
      outcome = { ok: false, detail: error instanceof Error ? error.message.split('\n')[0] : String(error) };
    } finally {
      await client.close().catch(() => {});
    }
    const flood = [...statuses]
      .sort()
      .map(([status, n]) => `${n}×${status}`)
      .join(' ');
    return {
      scenario:
        '1,000 anonymous `initialize` to a `sessions: true` deployment from 127.0.0.1, then a real MCP client from 127.0.0.2',
      result: `flood: ${flood}; the real client: ${outcome.ok ? `started ${outcome.detail} and called a tool` : `failed (${outcome.detail})`}`,
      target: 'the real client succeeds',
      met: outcome.ok,
      notes: [],
    };
  } finally {
    await agent.close();
    await cleanHome(home);
  }
}
