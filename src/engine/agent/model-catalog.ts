/**
 * The engine's models: the built-in ones (src/shared/models.ts) and the entries of `models` in its
 * engine-settings.json. The file is read again whenever it changed, so a new entry needs no restart;
 * keys come from the engine's environment, plus the values `POST /v1/engine/reload` hands over
 * (kept in memory only). A wrong entry is left out and reported with the file and the field.
 */
import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import type { ModelProblem } from '../../api/contract.js';
import { ENV_NAME_PATTERN } from '../../definition/names.js';
import { LOCAL_MODEL_ID, MODEL_PROVIDERS, MODELS, type ModelInfo } from '../../shared/models.js';

/** A model the engine can name, and where it comes from. */
export interface ConfiguredModel extends ModelInfo {
  source: 'built-in' | 'settings';
}

export interface ModelCatalog {
  models: ConfiguredModel[];
  problems: ModelProblem[];
}

const ModelEntry = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/, 'must be 1 to 128 letters, digits and . _ : / @ -')
    .refine((id) => id !== LOCAL_MODEL_ID, `${LOCAL_MODEL_ID} is the offline planner's; choose another id`),
  provider: z.enum(MODEL_PROVIDERS),
  model: z.string().min(1).max(256).optional(),
  base_url: z
    .string()
    .refine((url) => /^https?:\/\/[^/]/i.test(url) && URL.canParse(url), 'must be an http:// or https:// URL')
    // the address is listed by GET /v1/models: a key belongs in a variable
    .refine((url) => !URL.canParse(url) || new URL(url).username === '', 'must not hold a user or key: use api_key_env')
    .optional(),
  api_key_env: z.string().regex(ENV_NAME_PATTERN, 'must be an environment variable name').optional(),
  summary: z.string().max(200).optional(),
});

/** The catalog of a settings file's `models` value; `where` is the file, for the problems' paths. */
export function modelCatalogOf(raw: unknown, where: string): ModelCatalog {
  const builtIn: ConfiguredModel[] = MODELS.map((model) => ({ ...model, source: 'built-in' }));
  if (raw === undefined) return { models: builtIn, problems: [] };
  if (!Array.isArray(raw)) {
    return {
      models: builtIn,
      problems: [
        { path: `${where}: models`, message: 'must be a list of { id, provider, model, base_url?, api_key_env? }' },
      ],
    };
  }
  const problems: ModelProblem[] = [];
  const added = new Map<string, ConfiguredModel>();
  raw.forEach((entry: unknown, index) => {
    const at = `${where}: models[${index}]`;
    const parsed = ModelEntry.safeParse(entry);
    if (!parsed.success) {
      for (const issue of parsed.error.issues.slice(0, 3)) {
        const field = issue.path.length === 0 ? '' : `.${issue.path.join('.')}`;
        problems.push({ path: `${at}${field}`, message: issue.message });
      }
      return;
    }
    const e = parsed.data;
    if (e.provider === 'openai-compatible' && e.base_url === undefined) {
      problems.push({ path: `${at}.base_url`, message: 'an openai-compatible model needs the address of its API' });
      return;
    }
    if (added.has(e.id)) {
      problems.push({ path: `${at}.id`, message: `"${e.id}" is named by an earlier entry; this one is left out` });
      return;
    }
    added.set(e.id, {
      id: e.id,
      summary: e.summary ?? `${e.provider} model ${e.model ?? e.id} of the engine's settings`,
      provider: e.provider,
      model: e.model ?? e.id,
      ...(e.base_url === undefined ? {} : { baseUrl: e.base_url.replace(/\/+$/, '') }),
      ...(e.api_key_env === undefined ? {} : { keyVariable: e.api_key_env }),
      source: 'settings',
    });
  });
  // an entry with a built-in's id replaces it (another address, another key variable)
  const models = builtIn.map((model) => added.get(model.id) ?? model);
  for (const model of added.values()) if (!builtIn.some((b) => b.id === model.id)) models.push(model);
  return { models, problems };
}

/** The catalog of the settings file, read again when the file changed since the last read. */
export class ModelSettings {
  private seen: string | undefined;
  private catalog: ModelCatalog = modelCatalogOf(undefined, '');

  /** `onRead`: told of each new reading, to report its wrong entries */
  constructor(
    private readonly settingsFile: string | undefined,
    private readonly onRead: (catalog: ModelCatalog) => void = () => {},
  ) {}

  async current(force = false): Promise<ModelCatalog> {
    if (this.settingsFile === undefined) return this.catalog;
    const file = this.settingsFile;
    let stamp: string;
    try {
      const info = await stat(file);
      stamp = `${info.mtimeMs}:${info.size}`;
    } catch {
      stamp = 'none';
    }
    if (!force && stamp === this.seen) return this.catalog;
    this.seen = stamp;
    this.catalog = stamp === 'none' ? modelCatalogOf(undefined, file) : await readCatalog(file);
    this.onRead(this.catalog);
    return this.catalog;
  }
}

async function readCatalog(file: string): Promise<ModelCatalog> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    const why = error instanceof SyntaxError ? `is not JSON: ${error.message}` : 'could not be read';
    return { ...modelCatalogOf(undefined, file), problems: [{ path: file, message: `the file ${why}` }] };
  }
  const models = typeof parsed === 'object' && parsed !== null ? (parsed as { models?: unknown }).models : undefined;
  return modelCatalogOf(models, file);
}
