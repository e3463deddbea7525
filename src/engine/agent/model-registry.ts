/**
 * The models of a running engine: the catalog of its settings file (read again when the file
 * changes), the environment their keys come from (the engine's, plus the keys a reload handed over,
 * in memory only), and the listing of GET /v1/models.
 */
import type { ModelList } from '../../api/contract.js';
import type { Logger } from '../engine-log.js';
import { ModelSettings, type ModelCatalog } from './model-catalog.js';
import { cachedReach, modelStatuses, type Reach } from './model-status.js';

export interface ModelRegistryOptions {
  env: Record<string, string | undefined>;
  settingsFile?: string | undefined;
  logger: Logger;
  clock: () => number;
  reach?: Reach | undefined;
  /** hides a key handed over by a reload from every log line */
  hideSecret?: ((value: string) => void) | undefined;
}

export class ModelRegistry {
  private readonly settings: ModelSettings;
  private readonly reach: Reach;
  /** keys handed over by `mcpctl engine reload`, over the engine's own environment */
  private readonly handed: Record<string, string> = {};

  constructor(private readonly options: ModelRegistryOptions) {
    const log = options.logger;
    // a wrong entry is named in the log at start and whenever the file changes
    this.settings = new ModelSettings(options.settingsFile, (catalog) => {
      for (const problem of catalog.problems) log.warn('a model entry of the settings is left out', { ...problem });
    });
    void this.settings.current().catch(() => undefined);
    this.reach = options.reach ?? cachedReach(options.clock);
  }

  /** The environment the models' keys and addresses are read from. */
  env(): Record<string, string | undefined> {
    return { ...this.options.env, ...this.handed };
  }

  catalog(): Promise<ModelCatalog> {
    return this.settings.current();
  }

  async list(catalog?: ModelCatalog): Promise<ModelList> {
    const { models, problems } = catalog ?? (await this.catalog());
    return { models: await modelStatuses(models, this.env(), this.reach), problems };
  }

  /** Reads the settings again, and takes the keys handed over (their names are logged, never their values). */
  async reload(values: Record<string, string> = {}): Promise<ModelList> {
    for (const [name, value] of Object.entries(values)) {
      if (value.trim() === '') continue;
      this.options.hideSecret?.(value.trim());
      this.handed[name] = value.trim();
    }
    const catalog = await this.settings.current(true);
    this.options.logger.info('models reloaded', {
      models: catalog.models.map((m) => m.id),
      problems: catalog.problems.length,
      keys_handed_over: Object.keys(values),
    });
    return this.list(catalog);
  }
}
