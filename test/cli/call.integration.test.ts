/**
 * `mcpctl tools` and `mcpctl call` against real servers: a definition file served for the command,
 * a `mcpctl dev` server by its URL (with a bearer token it must be given), and deployments of the
 * README's examples on a real engine, by their stable names. The runtime runs from dist/: `npm run
 * build` first.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/app.js';
import { runCli } from '../support/cli.js';
import { startDev } from '../support/dev-session.js';
import { realEnginePerTest } from '../support/engine.js';
import { closeServer, listen, makeTempDir } from '../support/runtime.js';

const CALCULATOR = join(ROOT, 'examples', 'calculator', 'server.yaml');
const WEATHER = join(ROOT, 'examples', 'weather', 'server.yaml');
const KEY = 'call-test-key-0123456789abcdef0123456789';

describe('mcpctl tools and call: a definition file', () => {
  it('lists the tools with their arguments, and --json is the raw list', async () => {
    const listed = await runCli(['tools', CALCULATOR], { env: { PATH: process.env.PATH } });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('offers 3 tools');
    expect(listed.stdout).toMatch(/evaluate {2}Evaluate an expression/);
    expect(listed.stdout).toMatch(/numbers +list of number, required +the numbers to describe/);
    const json = await runCli(['--json', 'tools', CALCULATOR], { env: { PATH: process.env.PATH } });
    expect(json.json<{ tools: Array<{ name: string }> }>().tools.map((t) => t.name)).toEqual([
      'evaluate',
      'statistics',
      'convert',
    ]);
  });

  it('types --arg by the input schema, collects repeated keys, and merges --json under them', async () => {
    const env = { PATH: process.env.PATH };
    const stats = await runCli(
      ['call', CALCULATOR, 'statistics', '--arg', 'numbers=1', '-a', 'numbers=2', '-a', 'numbers=6'],
      { env },
    );
    expect(stats.code, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({ count: 3, sum: 9, mean: 3 });

    const converted = await runCli(
      ['call', CALCULATOR, 'convert', '--json', '{"value": 1, "from": "km"}', '--arg', 'to=m', '--arg', 'value=2'],
      { env },
    );
    expect(converted.code, converted.stderr).toBe(0);
    expect(converted.stdout).toContain('2000');

    const raw = await runCli(['call', CALCULATOR, 'evaluate', '--arg', 'expression=2*(3+4)', '--json'], { env });
    expect(raw.code, raw.stderr).toBe(0);
    expect(raw.json()).toMatchObject({ structuredContent: { result: 14 } });
  });

  it('exits 1 when the tool answers with an error, and 2 for an unknown tool or a bad argument', async () => {
    const env = { PATH: process.env.PATH };
    const failed = await runCli(['call', CALCULATOR, 'evaluate', '--arg', 'expression=1/0'], { env });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('division by zero');
    expect(failed.stderr).toContain('evaluate of');
    expect(failed.stderr).toContain('answered with an error');

    const unknown = await runCli(['call', CALCULATOR, 'sqrt'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('has no tool named sqrt');
    expect(unknown.stderr).toMatch(/evaluate[\s\S]*statistics[\s\S]*convert/);

    const typed = await runCli(
      ['call', CALCULATOR, 'convert', '--arg', 'value=many', '--arg', 'from=m', '--arg', 'to=km'],
      { env },
    );
    expect(typed.code).toBe(2);
    expect(typed.stderr).toContain('"many" is not a number');

    const missing = await runCli(['call', CALCULATOR, 'convert', '--arg', 'value=1'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('convert needs from, to');
  });
});

describe('mcpctl call: a dev server by its URL', () => {
  it('answers a 401 with how to send a token, and calls with --header', async () => {
    await using temp = await makeTempDir();
    await cp(join(ROOT, 'test', 'fixtures', 'runtime', 'dev'), join(temp.path, 'dev'), { recursive: true });
    const file = join(temp.path, 'dev', 'server.yaml');
    const source = await readFile(file, 'utf8');
    await writeFile(
      file,
      source.replace('template: basic\n', 'template: basic\nauth:\n  type: bearer\n  token: ${DEV_TOKEN}\n'),
    );
    const token = 'dev-token-0123456789abcdef';
    await using dev = startDev([file, '--port', '0'], { env: { DEV_TOKEN: token } });
    const [, mcpUrl] = await dev.waitFor(/MCP URL\s+(http:\/\/\S+\/mcp)/);
    const env = { PATH: process.env.PATH };

    const refused = await runCli(['call', mcpUrl!, 'hello', '--arg', 'name=Ann'], { env });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('needs a credential (401)');
    expect(refused.stderr).toContain(`--header "Authorization: Bearer <token>"`);

    const wrong = await runCli(['call', mcpUrl!, 'hello', '-H', 'Authorization: Bearer nope'], { env });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain('the token sent was refused');

    const called = await runCli(
      ['call', mcpUrl!, 'hello', '--arg', 'name=Ann', '-H', `Authorization: Bearer ${token}`],
      { env },
    );
    expect(called.code, called.stderr).toBe(0);
    expect(called.stdout.trim()).toBe('Hello, Ann!');

    // the file itself: the token comes from the variable its auth reads
    const direct = await runCli(['call', file, 'hello', '--arg', 'name=Bo'], { env: { ...env, DEV_TOKEN: token } });
    expect(direct.code, direct.stderr).toBe(0);
    expect(direct.stdout.trim()).toBe('Hello, Bo!');
    expect(await dev.stop()).toBe(0);
  });

  it('says plainly when nothing listens at the URL', async () => {
    // a port that was free a moment ago
    const { server, url } = await listen(() => {});
    await closeServer(server);
    const result = await runCli(['tools', `${url}/mcp`], { env: { PATH: process.env.PATH } });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(`cannot reach ${url}/mcp: nothing listens there`);
  });
});

describe('mcpctl call: deployments on the local engine', { timeout: 120_000 }, () => {
  const engines = realEnginePerTest(KEY);

  it('reaches a tool of weather.production by its stable name, and a protected one with a token', async () => {
    const { engine, home } = await engines.start();
    const env = { PATH: process.env.PATH, MCPCTL_HOME: home, MCPCTL_API_URL: engine.url, MCPCTL_API_KEY: KEY };
    const deployed = await runCli(['deploy', WEATHER, '--env', 'production'], { env, cwd: ROOT });
    expect(deployed.code, deployed.stderr).toBe(0);

    const tools = await runCli(['tools', 'weather.production'], { env, cwd: ROOT });
    expect(tools.code, tools.stderr).toBe(0);
    expect(tools.stdout).toMatch(/latitude +number, required/);

    // no weather API here (offline, and deployments reach no private address): reaching the tool is what counts
    const called = await runCli(
      ['call', 'weather.production', 'get_forecast', '--arg', 'latitude=52.5', '--arg', 'longitude=13.4'],
      { env, cwd: ROOT },
    );
    expect([0, 1]).toContain(called.code);
    if (called.code === 1) expect(called.stderr).toContain('get_forecast of weather.production answered with an error');

    await using temp = await makeTempDir();
    const protectedFile = join(temp.path, 'server.yaml');
    await writeFile(
      protectedFile,
      (await readFile(CALCULATOR, 'utf8')).replace(
        'template: custom\n',
        'template: custom\nauth:\n  type: bearer\n  token: ${CALC_TOKEN}\n',
      ),
    );
    await cp(join(ROOT, 'examples', 'calculator'), temp.path, {
      recursive: true,
      filter: (src) => !src.endsWith('server.yaml'),
    });
    const token = 'calc-token-0123456789abcdef0123';
    const secured = await runCli(['deploy', protectedFile, '--env', 'development', '--env-var', 'CALC_TOKEN'], {
      env: { ...env, CALC_TOKEN: token },
      cwd: temp.path,
    });
    expect(secured.code, secured.stderr).toBe(0);
    const refused = await runCli(['call', 'calculator.development', 'evaluate', '--arg', 'expression=1+1'], {
      env,
      cwd: temp.path,
    });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('needs a credential (401)');
    expect(refused.stderr).toContain('--header');
    const allowed = await runCli(
      ['call', 'calculator.development', 'evaluate', '--arg', 'expression=1+1', '-H', `Authorization: Bearer ${token}`],
      { env, cwd: temp.path },
    );
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain('"result": 2');
  });
});
