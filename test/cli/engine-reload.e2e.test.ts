/**
 * `mcpctl engine reload` with the real binary and the real background engine: a model entry whose
 * key variable the engine was started without becomes usable once the key is exported and the
 * engine reloaded, without a restart (the same pid), and the key never reaches the engine's log.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, runBin, type BinResult, type Sandbox } from '../support/cli.js';
import { BIN, killEngineOf, requireBuilt } from '../support/app.js';
import { startProviderDouble, type ProviderDouble } from '../support/provider-double.js';
import { scriptedChatServer } from '../support/provider-wire.js';

const KEY = 'or-key-0123456789abcdef';
let box: Sandbox;
let llm: ProviderDouble;

beforeAll(async () => {
  requireBuilt();
  llm = await startProviderDouble(scriptedChatServer('vllm', () => []));
  box = await createSandbox();
  await mkdir(box.env.MCPCTL_HOME!, { recursive: true });
  const models = [
    {
      id: 'hosted',
      provider: 'openai-compatible',
      model: 'qwen',
      base_url: `${llm.url}/v1`,
      api_key_env: 'HOSTED_KEY',
    },
  ];
  await writeFile(join(box.env.MCPCTL_HOME!, 'engine-settings.json'), JSON.stringify({ models }));
});
afterAll(async () => {
  if (box !== undefined) {
    await mcpctl(['engine', 'stop']);
    killEngineOf(box.env.MCPCTL_HOME!);
    await box.cleanup();
  }
  await llm?.close();
});

function mcpctl(args: string[], env: Record<string, string> = {}): Promise<BinResult> {
  return runBin(BIN, args, { env: { ...box.env, ...env }, cwd: box.dir });
}

describe('mcpctl engine reload', () => {
  it('hands the local engine a key exported after it started; the engine keeps running and never logs it', async () => {
    const started = await mcpctl(['engine', 'start', '--json']);
    expect(started.code).toBe(0);
    const pid = JSON.parse(started.stdout).pid as number;

    const before = JSON.parse((await mcpctl(['models', '--json'])).stdout);
    expect(before.models).toContainEqual(
      expect.objectContaining({
        id: 'hosted',
        available: false,
        reason: 'HOSTED_KEY is not set where the engine runs',
      }),
    );

    const reloaded = await mcpctl(['engine', 'reload', '--json'], { HOSTED_KEY: KEY });
    expect(reloaded.code).toBe(0);
    expect(JSON.parse(reloaded.stdout)).toMatchObject({ reloaded: true, keys_handed_over: ['HOSTED_KEY'] });

    const after = JSON.parse((await mcpctl(['models', '--json'])).stdout);
    expect(after.models).toContainEqual(expect.objectContaining({ id: 'hosted', available: true }));
    // the reachability check carried the key
    expect(llm.requests.at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`);

    const status = JSON.parse((await mcpctl(['engine', 'status', '--json'])).stdout);
    expect(status.pid).toBe(pid);
    const log = await readFile(join(box.env.MCPCTL_HOME!, 'engine.log'), 'utf8');
    expect(log).toContain('models reloaded');
    expect(log).not.toContain(KEY);
  });
});
