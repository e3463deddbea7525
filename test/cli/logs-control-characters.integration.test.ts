/* eslint-disable no-control-regex -- these tests look for control characters */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { callTool } from '../support/deployments.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';

let t: TestEngine;
beforeEach(async () => {
  t = await startTestEngine();
});
afterEach(async () => {
  await t.close();
});

/** an anonymous client's tool name that would retitle the terminal, then clear it */
const HOSTILE_TOOL = '\u001b]0;pwned\u0007\u001b[2Jgone';

describe('what the CLI prints from a service', () => {
  it('ATTACK: mcpctl logs prints a tool name with escape sequences as visible text', async () => {
    const d = await t.deploy(await t.addServer('weather'), 'development');
    await callTool(`${d.url}/mcp`, HOSTILE_TOOL, { text: '\u001b[8mhidden\u001b[0m' }).catch(() => undefined);
    await callTool(`${d.url}/mcp`, 'echo', { text: 'after the attack' });

    const result = await runCli(['logs', d.deployment_id], { env: t.env, cwd: t.sandbox.dir });
    expect(result.code).toBe(0);
    // the hostile request reached the log, and prints as text
    expect(result.stdout).toContain('\\x1b]0;pwned\\x07\\x1b[2Jgone');
    expect(result.stdout).toContain('after the attack');
    // stdout is not a terminal here: no colour of our own, so any ESC would be the service's
    expect(result.stdout).not.toContain('\u001b');
    expect(result.stdout).not.toContain('\u0007');

    const json = await runCli(['logs', d.deployment_id, '--json'], { env: t.env, cwd: t.sandbox.dir });
    expect(json.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    const messages = (json.json().lines as Array<{ message: string }>).map((line) => line.message).join('\n');
    expect(messages).toContain(HOSTILE_TOOL.slice(0, 6));
  });
});
