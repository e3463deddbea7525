/**
 * A definition with sessions (examples/everything) deployed to production with 2 instances behind
 * the gateway, spoken to by the official MCP client: each session must reach the instance that
 * holds it for every request (sampling and elicitation answers, logging levels, subscriptions),
 * and a session whose instance is killed is answered 404, so the client initialises a new one.
 *
 * This needs the gateway to route by Mcp-Session-Id (sticky sessions). The runtime (dist/, so
 * `npx tsc -p tsconfig.build.json` first) serves sessions; the gateway routing is the engine's.
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import { toBuildRequest } from '../../../src/api/build-request.js';
import { loadDefinition } from '../../../src/definition/load.js';
import type { RunningEngine } from '../../../src/engine/engine.js';
import { createSandbox, type Sandbox } from '../../support/cli.js';
import { startRealEngine } from '../../support/engine.js';

const API_KEY = 'sessions-test-key-0123456789abcdef';
const EXAMPLE = join(import.meta.dirname, '..', '..', '..', 'examples', 'everything', 'server.yaml');

let sandbox: Sandbox;
let engine: RunningEngine | undefined;

beforeEach(async () => {
  sandbox = await createSandbox();
  engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, { apiKey: API_KEY });
});
afterEach(async () => {
  await engine?.close(1000);
  engine = undefined;
  await sandbox.cleanup();
});

async function openSession(
  mcpUrl: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; logs: unknown[] }> {
  const client = new Client(
    { name: 'sessions-deployment-test', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  const logs: unknown[] = [];
  client.setNotificationHandler('notifications/message', (notification) => void logs.push(notification.params.data));
  client.setRequestHandler('sampling/createMessage', async () => ({
    role: 'assistant',
    model: 'stand-in',
    content: { type: 'text', text: 'four' },
  }));
  client.setRequestHandler('elicitation/create', async () => ({
    action: 'accept',
    content: { username: 'ada', email: 'ada@example.com' },
  }));
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl));
  await client.connect(transport);
  return { client, transport, logs };
}

function text(result: { content?: unknown }): string | undefined {
  return (result.content as Array<{ text?: string }> | undefined)?.[0]?.text;
}

describe('sessions behind the gateway, 2 instances (needs the gateway to route by Mcp-Session-Id)', () => {
  it('keeps each session on its instance, and a session whose instance is killed gets 404 and initialises again', async () => {
    const api = new ApiClient({ baseUrl: engine!.url, apiKey: API_KEY });
    try {
      const server = await api.build(await toBuildRequest(await loadDefinition(EXAMPLE)));
      const { deployment } = await api.deploy({ mcp_id: server.mcp_id, environment: 'production' });
      expect(deployment).toMatchObject({ status: 'deployed', desired_instances: 2 });
      const mcpUrl = `${deployment.url}/mcp`;

      const sessions = [];
      for (let i = 0; i < 4; i++) sessions.push(await openSession(mcpUrl));
      expect(new Set(sessions.map((s) => s.transport.sessionId)).size).toBe(4);
      // every request of a session must reach the instance that holds it, several times over
      for (let round = 0; round < 3; round++) {
        for (const { client, logs } of sessions) {
          await client.setLoggingLevel('info');
          expect(text(await client.callTool({ name: 'test_sampling', arguments: { prompt: '2+2?' } }))).toBe(
            'LLM response: four',
          );
          expect(text(await client.callTool({ name: 'test_elicitation', arguments: { message: 'who?' } }))).toBe(
            'User response: action=accept, content={"username":"ada","email":"ada@example.com"}',
          );
          await client.subscribeResource({ uri: 'test://watched-resource' });
          await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
          expect(logs.slice(-3)).toEqual([
            'Tool execution started',
            'Tool processing data',
            'Tool execution completed',
          ]);
        }
      }

      // a module function completes in the deployed bundle too, from the arguments already chosen
      const city = await sessions[0]!.client.complete({
        ref: { type: 'ref/prompt', name: 'plan_trip' },
        argument: { name: 'city', value: 'b' },
        context: { arguments: { country: 'Germany' } },
      });
      expect(city.completion.values).toEqual(['Berlin']);

      // kill one instance: its sessions are gone (404, the client must initialise again), the others still work
      const victim = (await api.status(deployment.deployment_id)).deployment!.instances!.find(
        (x) => x.state === 'healthy',
      )!;
      process.kill(victim.pid!, 'SIGKILL');
      const outcomes = await Promise.all(
        sessions.map(({ client }) =>
          client.callTool({ name: 'test_simple_text', arguments: {} }).then(
            () => 'served',
            (error: unknown) => (/404|Session not found/.test(String(error)) ? 'gone' : `unexpected: ${String(error)}`),
          ),
        ),
      );
      expect(
        outcomes.every((o) => o === 'served' || o === 'gone'),
        outcomes.join(', '),
      ).toBe(true);
      const again = await openSession(mcpUrl);
      expect(text(await again.client.callTool({ name: 'test_sampling', arguments: { prompt: 'again' } }))).toBe(
        'LLM response: four',
      );
      await again.client.close();
      for (const { client } of sessions) await client.close().catch(() => {});
    } finally {
      await api.close();
    }
  });
});
