/**
 * `subscriptions/listen` for clients of the 2026-07-28 revision, on a stateless definition (no
 * `sessions: true`): the stream is acknowledged with the resources asked for, and hears
 * `notifications/resources/updated` when a module says a resource changed and when a `file`
 * resource changes on disk; once it is closed, nothing is watched for it any more.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readBundle } from '../../src/runtime/host/bundle.js';
import { createRuntime, type Runtime } from '../../src/runtime/server/server.js';
import { bundleDefinition, closeServer, connect, listen, makeTempDir } from '../support/runtime.js';
import { eventually } from '../support/wait.js';

const DEFINITION = `
name: listening
template: custom
tools:
  - name: touch
    description: Tells listeners that test://note changed.
    inputSchema: { type: object }
    handler: { type: module, module: listening.mjs, export: touch }
resources:
  - uri: test://note
    name: note
    description: A note.
    mimeType: text/plain
    source: { type: file, path: note.txt }
`;
const MODULE = `
export async function touch(_args, context) {
  await context.resourceUpdated('test://note');
  return 'touched';
}
`;

let temp: Awaited<ReturnType<typeof makeTempDir>>;
let runtime: Runtime;
let stop: () => Promise<void>;
let mcpUrl: string;
let noteFile: string;

beforeEach(async () => {
  temp = await makeTempDir();
  const source = join(temp.path, 'source');
  await mkdir(source);
  await writeFile(join(source, 'server.yaml'), DEFINITION);
  await writeFile(join(source, 'listening.mjs'), MODULE);
  await writeFile(join(source, 'note.txt'), 'first\n');
  const { dir } = await bundleDefinition(join(source, 'server.yaml'), join(temp.path, 'bundles'));
  const bundle = await readBundle(dir);
  noteFile = join(bundle.filesDir, 'note.txt');
  runtime = await createRuntime(bundle.definition, { dir: bundle.filesDir, logger: { debug: false, log: () => {} } });
  const { server, url } = await listen(runtime.handler);
  mcpUrl = `${url}/mcp`;
  stop = async () => {
    await closeServer(server);
    await runtime.close();
  };
});
afterEach(async () => {
  await stop();
  await temp[Symbol.asyncDispose]();
});

describe('subscriptions/listen (2026-07-28) on a stateless server', () => {
  it('hears a module’s update and a file’s change, for the resources it asked for', async () => {
    await using client = await connect(mcpUrl, { era: 'modern' });
    const heard: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => void heard.push(n.params.uri));
    const subscription = await client.listen({ resourceSubscriptions: ['test://note'] });
    expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: ['test://note'] });

    await client.callTool({ name: 'touch', arguments: {} });
    await eventually(async () => expect(heard).toEqual(['test://note']));

    await writeFile(noteFile, 'second\n');
    await eventually(async () => expect(heard).toEqual(['test://note', 'test://note']));

    await subscription.close();
    await writeFile(noteFile, 'third\n');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard).toHaveLength(2);
  });

  it('tells a 2026-07-28 client that resources can be subscribed to, and a stateless 2025 client not', async () => {
    await using modern = await connect(mcpUrl, { era: 'modern' });
    expect(modern.getServerCapabilities()?.resources?.subscribe).toBe(true);
    await using legacy = await connect(mcpUrl);
    expect(legacy.getServerCapabilities()?.resources?.subscribe).toBeUndefined();
  });
});
