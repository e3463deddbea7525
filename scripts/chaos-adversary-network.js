// The adversary's network scenarios: an http tool led elsewhere by redirects and `..` arguments
// (SSRF), and API keys guessed from one address. Loopback only: the one address outside it (a
// cloud metadata address a redirect names) is only asked for once the engine has shown that it
// checks where a handler connects, so nothing here ever reaches it.
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { callTool, cleanHome, deploy, listen, newHome, startEngine, toolAnswer, writeServer } from './chaos-support.js';

const METADATA_URL = 'http://169.254.169.254/latest/meta-data/';
// `..` as it is, encoded, with more after it, and half encoded
const DOT_ARGUMENTS = ['..', '%2e%2e', '../admin', '.%2E'];

/** A definition with http tools against `apiUrl`, each sending the secret header. */
function ssrfDefinition(dir, name, apiUrl, egress) {
  const tool = (tool, url, properties = '{}', required = '') => [
    `  - name: ${tool}`,
    `    description: Calls the API (${tool})`,
    `    inputSchema: { type: object, properties: ${properties}${required} }`,
    `    handler: { type: http, url: ${JSON.stringify(url)}, headers: { X-Api-Key: "\${API_KEY}" }, timeout_ms: 5000 }`,
  ];
  return writeServer(dir, [
    `name: ${name}`,
    'template: basic',
    'description: A server with an API behind a secret header',
    ...(egress ? ['egress: { allow_private: true }'] : []),
    'tools:',
    ...tool('profile', `${apiUrl}/v1/users/{{args.id}}/profile`, '{ id: { type: string } }', ', required: [id]'),
    ...tool('to_other', `${apiUrl}/to-other`),
    ...tool('to_metadata', `${apiUrl}/to-metadata`),
  ]);
}

/** A path the API should never see from `/v1/users/{{args.id}}/profile`: another folder, or a dot segment, however encoded. */
function climbed(path) {
  const match = /^\/v1\/users\/([^/?#]+)\/profile(?:\?.*)?$/.exec(path);
  if (match === null) return true;
  let segment = match[1];
  for (let i = 0; i < 3; i += 1) {
    if (segment === '.' || segment === '..' || segment.includes('/') || segment.includes('\\')) return true;
    try {
      segment = decodeURIComponent(segment);
    } catch {
      return false;
    }
  }
  return segment === '.' || segment === '..' || segment.includes('/');
}

/** Redirects to another loopback origin and to a metadata address, and `..` in a path argument. */
export async function ssrf() {
  const home = newHome('ssrf');
  const key = `api-key-${randomBytes(12).toString('hex')}`;
  const apiSeen = [];
  const otherSeen = [];
  const other = await listen((req, res) => {
    otherSeen.push({ path: req.url, headers: JSON.stringify(req.headers) });
    res.writeHead(200, { 'content-type': 'text/plain' }).end('landed');
  });
  const apiServer = await listen((req, res) => {
    apiSeen.push(req.url ?? '');
    if (req.url === '/to-other') res.writeHead(302, { location: `${other.url}/landing` }).end();
    else if (req.url === '/to-metadata') res.writeHead(302, { location: METADATA_URL }).end();
    else
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ user: 'alice', path: req.url }));
  });
  try {
    await startEngine(home);
    const env = { API_KEY: key };
    const flags = ['--env-var', 'API_KEY'];
    const closed = await deploy(
      home,
      ssrfDefinition(join(home, 'closed'), 'api-closed', apiServer.url, false),
      'staging',
      env,
      flags,
    );
    const open = await deploy(
      home,
      ssrfDefinition(join(home, 'open'), 'api-open', apiServer.url, true),
      'staging',
      env,
      flags,
    );
    const call = async (deployment, tool, args) =>
      toolAnswer((await callTool(`${deployment.url}/mcp`, tool, args)).text);
    const succeeded = (answer) => answer.answered && !answer.isError;

    // without egress: a loopback API is out of reach
    await call(closed, 'profile', { id: 'alice' });
    await call(closed, 'to_other', {});
    const reachedWithoutEgress = apiSeen.length;
    const checksEgress = reachedWithoutEgress === 0;

    // with egress: the API answers, and a redirect to another origin carries no secret header
    apiSeen.length = 0;
    const control = await call(open, 'profile', { id: 'alice' });
    const controlOk = succeeded(control) && apiSeen.includes('/v1/users/alice/profile');
    await call(open, 'to_other', {});
    const headerLeaks = otherSeen.filter((r) => r.headers.includes(key) || /x-api-key/i.test(r.headers)).length;
    let metadata = 'not tried: a loopback API was reachable without egress';
    let metadataLeak = 0;
    if (checksEgress) {
      const answer = await call(open, 'to_metadata', {});
      metadataLeak = succeeded(answer) ? 1 : 0;
      metadata = succeeded(answer) ? `followed: ${answer.text.slice(0, 80)}` : 'refused';
    }

    // `..` and its encodings where the argument lands in the URL's path
    const climbs = [];
    let refused = 0;
    for (const id of DOT_ARGUMENTS) {
      apiSeen.length = 0;
      const answer = await call(open, 'profile', { id });
      if (!succeeded(answer)) refused += 1;
      for (const path of apiSeen) if (climbed(path)) climbs.push(`${JSON.stringify(id)} → ${path}`);
    }
    const leaks = reachedWithoutEgress + headerLeaks + metadataLeak + climbs.length;
    return {
      scenario:
        'SSRF: an http tool with a secret header; a loopback API without egress, 302 to another origin and to 169.254.169.254, `..` in `{{args.id}}`',
      result: `${leaks} leaks (${reachedWithoutEgress} reached without egress, ${headerLeaks} secret headers across origins, metadata ${metadata}, ${climbs.length} climbed paths); ${refused}/${DOT_ARGUMENTS.length} dot arguments refused`,
      target: '0 leaks, metadata and dot arguments refused',
      met: leaks === 0 && checksEgress && metadata === 'refused' && refused === DOT_ARGUMENTS.length && controlOk,
      notes: [
        ...(controlOk ? [] : [`with egress the API was not reached: ${JSON.stringify(control.text.slice(0, 120))}`]),
        `the other origin saw ${otherSeen.length} requests`,
        ...climbs.slice(0, 5),
      ],
    };
  } finally {
    await cleanHome(home);
    await apiServer.close();
    await other.close();
  }
}

/** One GET of `/v1/deployments` from `localAddress` with `key`: status and Retry-After. */
function keyed(url, key, localAddress) {
  return new Promise((resolve) => {
    const request = httpRequest(
      `${url}/v1/deployments`,
      { agent: false, localAddress, timeout: 30_000, headers: { authorization: `Bearer ${key}` } },
      (response) => {
        response.resume();
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] }),
        );
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve({ status: 0, retryAfter: undefined }));
    request.end();
  });
}

/** 200 wrong API keys from 127.0.0.1, then the right key from 127.0.0.1 and from 127.0.0.2. */
export async function apiKeyGuessing() {
  const home = newHome('guessing');
  try {
    const state = await startEngine(home);
    const answers = [];
    for (let i = 0; i < 200; i += 1)
      answers.push(await keyed(state.url, randomBytes(24).toString('base64url'), '127.0.0.1'));
    const unauthorized = answers.filter((a) => a.status === 401).length;
    const limited = answers.filter((a) => a.status === 429);
    const firstLimited = answers.findIndex((a) => a.status === 429);
    const afterLimit = firstLimited < 0 ? [] : answers.slice(firstLimited);
    const withoutRetryAfter = limited.filter(
      (a) => a.retryAfter === undefined || !/^\d+$/.test(String(a.retryAfter)),
    ).length;
    const elsewhere = await keyed(state.url, state.apiKey, '127.0.0.2');
    const sameAddress = await keyed(state.url, state.apiKey, '127.0.0.1');
    const other = answers.filter((a) => a.status !== 401 && a.status !== 429).length;
    return {
      scenario: '200 wrong API keys to /v1 from 127.0.0.1, then the right key from 127.0.0.2',
      result: `${unauthorized} × 401, ${limited.length} × 429 (${firstLimited < 0 ? 'none' : `from attempt ${firstLimited + 1}`}); the right key from 127.0.0.2: ${elsewhere.status}`,
      target: '≤ 20 × 401, 429 with Retry-After after that; another address unaffected',
      met:
        unauthorized <= 20 &&
        limited.length > 0 &&
        afterLimit.every((a) => a.status === 429) &&
        withoutRetryAfter === 0 &&
        other === 0 &&
        elsewhere.status === 200,
      notes: [
        `the right key from 127.0.0.1 during the block: ${sameAddress.status}`,
        ...(withoutRetryAfter > 0 ? [`${withoutRetryAfter} × 429 without a Retry-After in seconds`] : []),
        ...(other > 0 ? [`${other} answers neither 401 nor 429`] : []),
      ],
    };
  } finally {
    await cleanHome(home);
  }
}
