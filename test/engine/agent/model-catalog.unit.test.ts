import { describe, expect, it } from 'vitest';
import { modelCatalogOf } from '../../../src/engine/agent/model-catalog.js';
import { modelStatuses } from '../../../src/engine/agent/model-status.js';
import { describeModels, MODELS } from '../../../src/shared/models.js';

const FILE = '/home/me/.mcpctl/engine-settings.json';

describe('the built-in models', () => {
  it('keep the offline planner first, and name no model its SDK marks deprecated', () => {
    expect(MODELS[0]!.id).toBe('mcpctl-local');
    // the Anthropic SDK warns on every request to these (its internal/data/deprecated-models.js)
    for (const old of ['claude-sonnet-4-5', 'claude-sonnet-4-5-20250929', 'claude-mythos-preview'])
      expect(MODELS.map((m) => m.model)).not.toContain(old);
    expect(new Set(MODELS.map((m) => m.provider))).toEqual(new Set([undefined, 'anthropic', 'openai', 'gemini']));
    expect(describeModels()).toContain('GEMINI_API_KEY');
  });
});

describe('modelCatalogOf', () => {
  it('adds entries after the built-in ones; one with a built-in id replaces it', () => {
    const catalog = modelCatalogOf(
      [
        { id: 'local-llm', provider: 'openai-compatible', base_url: 'http://127.0.0.1:11434/v1/' },
        { id: 'gpt-5.4-mini', provider: 'openai', base_url: 'https://gateway.example/v1', api_key_env: 'GW_KEY' },
      ],
      FILE,
    );
    expect(catalog.problems).toEqual([]);
    const ids = catalog.models.map((m) => m.id);
    expect(ids[0]).toBe('mcpctl-local');
    expect(ids.at(-1)).toBe('local-llm');
    expect(ids.filter((id) => id === 'gpt-5.4-mini')).toHaveLength(1);
    expect(catalog.models.find((m) => m.id === 'local-llm')).toMatchObject({
      model: 'local-llm',
      baseUrl: 'http://127.0.0.1:11434/v1',
      source: 'settings',
    });
    expect(catalog.models.find((m) => m.id === 'gpt-5.4-mini')).toMatchObject({ keyVariable: 'GW_KEY' });
  });

  it.each([
    [{ id: 'mcpctl-local', provider: 'openai' }, 'models[0].id', "mcpctl-local is the offline planner's"],
    [{ id: 'x', provider: 'mistral' }, 'models[0].provider', 'anthropic'],
    [{ id: 'x', provider: 'openai-compatible' }, 'models[0].base_url', 'needs the address of its API'],
    [{ id: 'x', provider: 'openai', base_url: 'ftp://host' }, 'models[0].base_url', 'http:// or https://'],
    [{ id: 'x', provider: 'gemini', api_key_env: 'my key' }, 'models[0].api_key_env', 'environment variable name'],
    [{ id: 'x', provider: 'gemini', key: 'sk-1' }, 'models[0]', 'key'],
    [{ id: 'has space', provider: 'gemini' }, 'models[0].id', 'letters, digits'],
  ])('reports %j at its field and leaves it out', (entry, field, message) => {
    const catalog = modelCatalogOf([entry], FILE);
    expect(catalog.models.map((m) => m.source)).not.toContain('settings');
    expect(catalog.problems[0]!.path).toBe(`${FILE}: ${field}`);
    expect(catalog.problems[0]!.message).toContain(message);
  });

  it('reports a second entry with the same id, and a value that is not a list', () => {
    const twice = modelCatalogOf(
      [
        { id: 'a', provider: 'gemini' },
        { id: 'a', provider: 'openai' },
      ],
      FILE,
    );
    expect(twice.problems).toEqual([
      { path: `${FILE}: models[1].id`, message: '"a" is named by an earlier entry; this one is left out' },
    ]);
    expect(modelCatalogOf({ id: 'a' }, FILE).problems[0]!.path).toBe(`${FILE}: models`);
  });
});

describe('modelStatuses', () => {
  it('names the missing key, and asks an openai-compatible server whether it answers', async () => {
    const { models } = modelCatalogOf(
      [
        { id: 'up', provider: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' },
        { id: 'hosted', provider: 'openai-compatible', base_url: 'https://openrouter.ai/api/v1', api_key_env: 'OR' },
      ],
      FILE,
    );
    const asked: string[] = [];
    const statuses = await modelStatuses(models, { OPENAI_API_KEY: 'sk-1' }, async (url) => {
      asked.push(url);
      return undefined;
    });
    const byId = new Map(statuses.map((s) => [s.id, s]));
    expect(byId.get('mcpctl-local')).toEqual({
      id: 'mcpctl-local',
      default: true,
      available: true,
      source: 'built-in',
    });
    expect(byId.get('gpt-5.4-mini')).toMatchObject({ available: true, key_variable: 'OPENAI_API_KEY' });
    expect(byId.get('gemini-3.5-flash')).toMatchObject({
      available: false,
      reason: 'GEMINI_API_KEY is not set where the engine runs',
    });
    expect(byId.get('up')).toMatchObject({ available: true, base_url: 'http://127.0.0.1:9/v1' });
    // without its key, a hosted server is not asked
    expect(byId.get('hosted')).toMatchObject({ available: false, reason: 'OR is not set where the engine runs' });
    expect(asked).toEqual(['http://127.0.0.1:9/v1']);
  });
});
