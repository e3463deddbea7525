/**
 * Input-required results over real HTTP: a stateless runtime answers a 2026-07-28 client's call
 * of a tool that asks (elicitation, sampling) with the questions and a signed request state, and
 * the next call with the answers gets the result, one round or several, on this runtime or another
 * with the same key. A state that was changed, minted for another tool, arguments or user, or
 * signed with another key is refused. A 2025 client on a session is still sent elicitation/create.
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { startRuntimeProcess } from '../../src/runtime/host/process.js';
import { modernRpc } from '../support/modern.js';
import { bundleDefinition, FIXTURES, firstText, makeTempDir, serveDefinition } from '../support/runtime.js';

const ASKING = join(FIXTURES, 'asking', 'server.yaml');
const EVERYTHING = join(import.meta.dirname, '..', '..', 'examples', 'everything', 'server.yaml');
const KEY_A = 'a'.repeat(43);
const KEY_B = 'b'.repeat(43);
const ALL = { elicitation: {}, sampling: {}, roots: {} };

interface Reply {
  status: number;
  error?: { code: number; message: string; data?: Record<string, unknown> };
  result?: Record<string, unknown> & {
    resultType?: string;
    requestState?: string;
    inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
    content?: Array<{ type: string; text?: string }>;
  };
}

let nextId = 1;

/** One 2026-07-28 request: the version and capabilities travel in its `_meta`. */
function call(
  mcpUrl: string,
  name: string,
  extra: Record<string, unknown> = {},
  options: { user?: string; capabilities?: Record<string, unknown> } = {},
): Promise<Reply> {
  return modernRpc(
    mcpUrl,
    'tools/call',
    { name, arguments: {}, ...extra },
    {
      client: 'input-required-test',
      capabilities: options.capabilities ?? ALL,
      id: nextId++,
      ...(options.user === undefined ? {} : { user: options.user }),
    },
  );
}

const named = (name: string) => ({ name: { action: 'accept', content: { name } } });

function textOf(reply: Reply): string {
  return firstText(reply.result ?? {});
}

describe('input-required results for 2026-07-28 clients', () => {
  it('asks, then answers the call that brings the answer (one round)', async () => {
    await using served = await serveDefinition(ASKING, { requestStateKey: KEY_A });
    const first = await call(served.mcpUrl, 'greet');
    expect(first.result?.resultType).toBe('input_required');
    expect(first.result?.inputRequests?.name?.method).toBe('elicitation/create');
    expect(first.result?.inputRequests?.name?.params.message).toBe('What is your name?');
    expect(typeof first.result?.requestState).toBe('string');

    const second = await call(served.mcpUrl, 'greet', {
      inputResponses: named('Ada'),
      requestState: first.result?.requestState,
    });
    expect(second.result?.resultType).not.toBe('input_required');
    expect(textOf(second)).toBe('Hello, Ada!');
  });

  it('carries earlier answers from round to round, on another instance with the same key', async () => {
    await using one = await serveDefinition(ASKING, { requestStateKey: KEY_A });
    await using other = await serveDefinition(ASKING, { requestStateKey: KEY_A });
    const first = await call(one.mcpUrl, 'two_steps');
    expect(Object.keys(first.result?.inputRequests ?? {})).toEqual(['name']);
    const second = await call(other.mcpUrl, 'two_steps', {
      inputResponses: named('Ada'),
      requestState: first.result?.requestState,
    });
    expect(second.result?.resultType).toBe('input_required');
    expect(second.result?.inputRequests?.hi?.method).toBe('sampling/createMessage');
    expect(second.result?.requestState).not.toBe(first.result?.requestState);

    // only this round's answer is sent: the name travels in the state
    const third = await call(one.mcpUrl, 'two_steps', {
      inputResponses: { hi: { role: 'assistant', model: 'm', content: { type: 'text', text: 'Hi Ada!' } } },
      requestState: second.result?.requestState,
    });
    expect(textOf(third)).toBe('Ada: Hi Ada!');
  });

  it('asks again for an answer that is missing or not an answer, instead of failing', async () => {
    await using served = await serveDefinition(ASKING, { requestStateKey: KEY_A });
    const wrongKey = await call(served.mcpUrl, 'greet', { inputResponses: { other: named('Ada').name } });
    expect(wrongKey.result?.resultType).toBe('input_required');
    const notAnAnswer = await call(served.mcpUrl, 'greet', { inputResponses: { name: 12345 } });
    expect(notAnAnswer.result?.resultType).toBe('input_required');
  });

  it('ATTACK: refuses a request state that was changed', async () => {
    await using served = await serveDefinition(ASKING, { requestStateKey: KEY_A });
    const first = await call(served.mcpUrl, 'two_steps');
    const second = await call(served.mcpUrl, 'two_steps', {
      inputResponses: named('Ada'),
      requestState: first.result?.requestState,
    });
    const state = second.result!.requestState!;
    // the state's body says the name is Ada: the client makes it Eve, and keeps the signature
    const [prefix, body, mac] = [state.slice(0, 3), state.slice(3, state.lastIndexOf('.')), state.split('.').pop()!];
    const forged = Buffer.from(Buffer.from(body, 'base64url').toString('utf8').replace('Ada', 'Eve')).toString(
      'base64url',
    );
    const reply = await call(served.mcpUrl, 'two_steps', {
      inputResponses: { hi: { role: 'assistant', model: 'm', content: { type: 'text', text: 'Hi!' } } },
      requestState: `${prefix}${forged}.${mac}`,
    });
    expect(reply.result).toBeUndefined();
    expect(reply.error?.code).toBe(-32602);
    const appended = await call(served.mcpUrl, 'two_steps', { requestState: `${state}-TAMPERED` });
    expect(appended.error?.code).toBe(-32602);
  });

  it('ATTACK: refuses a state minted for another tool, other arguments or another user', async () => {
    await using served = await serveDefinition(ASKING, { requestStateKey: KEY_A });
    const first = await call(served.mcpUrl, 'greet', {}, { user: 'alice' });
    const state = first.result?.requestState;
    const answers = { inputResponses: named('Ada'), requestState: state };

    const otherTool = await call(served.mcpUrl, 'greet_too', answers, { user: 'alice' });
    expect(otherTool.error?.code).toBe(-32602);
    const otherArgs = await call(
      served.mcpUrl,
      'greet',
      { ...answers, arguments: { greeting: 'Bye' } },
      { user: 'alice' },
    );
    expect(otherArgs.error?.code).toBe(-32602);
    const otherUser = await call(served.mcpUrl, 'greet', answers, { user: 'mallory' });
    expect(otherUser.error?.code).toBe(-32602);
    // the same call by the same user goes through
    const same = await call(served.mcpUrl, 'greet', answers, { user: 'alice' });
    expect(textOf(same)).toBe('Hello, Ada!');
  });

  it("ATTACK: refuses a state signed with another deployment's key", async () => {
    await using ours = await serveDefinition(ASKING, { requestStateKey: KEY_A });
    await using theirs = await serveDefinition(ASKING, { requestStateKey: KEY_B });
    const first = await call(theirs.mcpUrl, 'greet');
    const reply = await call(ours.mcpUrl, 'greet', {
      inputResponses: named('Ada'),
      requestState: first.result?.requestState,
    });
    expect(reply.result).toBeUndefined();
    expect(reply.error?.code).toBe(-32602);
  });

  it('sends the user to a page (URL mode) when the client takes URL-mode elicitation', async () => {
    await using served = await serveDefinition(ASKING, { requestStateKey: KEY_A });
    const capabilities = { elicitation: { form: {}, url: {} } };
    const first = await call(served.mcpUrl, 'sign_in', {}, { capabilities });
    expect(first.result?.inputRequests?.sign_in).toEqual({
      method: 'elicitation/create',
      params: { mode: 'url', message: 'Sign in to continue', url: 'https://example.com/sign-in' },
    });
    const second = await call(
      served.mcpUrl,
      'sign_in',
      { inputResponses: { sign_in: { action: 'accept' } }, requestState: first.result?.requestState },
      { capabilities },
    );
    expect(textOf(second)).toBe('signed in');
    const formOnly = await call(served.mcpUrl, 'sign_in', {}, { capabilities: { elicitation: { form: {} } } });
    expect(formOnly.error?.code).toBe(-32021);
  });

  it('answers -32021 (HTTP 400) when the client did not declare what the tool needs', async () => {
    await using served = await serveDefinition(ASKING, { requestStateKey: KEY_A });
    const reply = await call(served.mcpUrl, 'greet', {}, { capabilities: { sampling: {} } });
    expect(reply.status).toBe(400);
    expect(reply.error?.code).toBe(-32021);
    expect(reply.error?.data?.requiredCapabilities).toEqual({ elicitation: {} });
  });
});

describe('a deployed instance (serve-bundle)', () => {
  it('signs with the key in its environment, which its handlers cannot read', async () => {
    await using temp = await makeTempDir();
    const { dir: bundleDir } = await bundleDefinition(ASKING, temp.path);
    const env = { MCPCTL_REQUEST_STATE_KEY: KEY_A };
    await using one = await startRuntimeProcess({ bundleDir, env });
    await using other = await startRuntimeProcess({ bundleDir, env });
    expect(textOf(await call(one.mcpUrl, 'key_seen'))).toBe('not set');
    // two processes, one key: the second takes the round the first began
    const first = await call(one.mcpUrl, 'greet');
    const second = await call(other.mcpUrl, 'greet', {
      inputResponses: named('Ada'),
      requestState: first.result?.requestState,
    });
    expect(textOf(second)).toBe('Hello, Ada!');
  });

  it('refuses to start with a key too short to sign with', async () => {
    await using temp = await makeTempDir();
    const { dir: bundleDir } = await bundleDefinition(ASKING, temp.path);
    await expect(startRuntimeProcess({ bundleDir, env: { MCPCTL_REQUEST_STATE_KEY: 'short' } })).rejects.toThrow(
      /MCPCTL_REQUEST_STATE_KEY has 5 characters/,
    );
  });
});

describe('2025 clients', () => {
  it('are sent elicitation/create on a session while the tool runs, as before', async () => {
    await using served = await serveDefinition(EVERYTHING);
    const client = new Client({ name: 'legacy', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(served.mcpUrl)));
    try {
      const result = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
      expect(asked).toEqual(['What is your name?']);
      expect(firstText(result)).toBe('Hello, Ada!');
    } finally {
      await client.close();
    }
  });

  it('without a session are told the tool needs one', async () => {
    await using served = await serveDefinition(ASKING);
    const client = new Client({ name: 'legacy', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    await client.connect(new StreamableHTTPClientTransport(new URL(served.mcpUrl)));
    try {
      const result = await client.callTool({ name: 'greet', arguments: {} });
      expect(result.isError).toBe(true);
      expect(firstText(result)).toMatch(/needs a session/);
    } finally {
      await client.close();
    }
  });
});
