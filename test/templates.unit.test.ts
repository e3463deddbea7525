/**
 * What `init` scaffolds and what `examples/` shows must deploy as written: the deploy defaults of
 * every template and example stay within the local engine's bounds in every environment.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ENVIRONMENTS } from '../src/api/contract.js';
import { configFromDefinition } from '../src/cli/steps/deploy-config.js';
import { listEnvRefs } from '../src/definition/interpolate.js';
import { loadDefinition } from '../src/definition/load.js';
import { resolveScaling } from '../src/engine/deployments/limits.js';
import { runCli } from './support/cli.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function definitionFiles(): Promise<Array<[string, string]>> {
  const files: Array<[string, string]> = [];
  for (const template of ['basic', 'advanced', 'custom']) {
    const dir = await mkdtemp(join(tmpdir(), 'mcpctl-templates-'));
    dirs.push(dir);
    const result = await runCli(['init', 'demo', '--template', template, '--yes'], { cwd: dir, env: {} });
    expect(result.code, result.stderr).toBe(0);
    files.push([`template ${template}`, join(dir, 'demo', 'server.yaml')]);
  }
  for (const example of ['weather', 'notes', 'calculator']) {
    files.push([`example ${example}`, join(import.meta.dirname, '..', 'examples', example, 'server.yaml')]);
  }
  return files;
}

describe('deploy defaults of templates and examples', async () => {
  const files = await definitionFiles();
  it.each(files)('%s deploys within bounds in every environment', async (_, file) => {
    const { definition } = await loadDefinition(file);
    const env = Object.fromEntries(listEnvRefs(definition.deploy ?? {}).map((name) => [name, 'value']));
    for (const environment of ENVIRONMENTS) {
      const config = await configFromDefinition(definition.deploy, environment, env);
      const scaling = resolveScaling(environment, config.scaling);
      expect(scaling, `${environment}: ${JSON.stringify(config.scaling)}`).toMatchObject({ ok: true });
    }
  });
});
