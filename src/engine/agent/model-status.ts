/**
 * Whether each model can run now, for GET /v1/models and `mcpctl models`: its key is set, and an
 * OpenAI-compatible server answers `GET {base_url}/models` (a cheap check, with a short time-out,
 * made only when listing and kept for a few seconds so that a listing stays fast).
 */
import { DEFAULT_AI_MODEL, type ModelStatus } from '../../api/contract.js';
import { keyVariableOf, PROVIDERS } from '../../shared/models.js';
import type { ConfiguredModel } from './model-catalog.js';

const REACH_TIMEOUT_MS = 1_500;
const REACH_CACHE_MS = 10_000;

/** The variable a model needs that the environment lacks. */
export function missingKey(model: ConfiguredModel, env: Record<string, string | undefined>): string | undefined {
  // an OpenAI-compatible server of one's own needs no key; one that names a variable needs it
  const variable = keyVariableOf(model);
  if (variable === undefined) return undefined;
  return (env[variable]?.trim() ?? '') === '' ? variable : undefined;
}

/** The address a model's requests go to. */
export function baseUrlOf(model: ConfiguredModel, env: Record<string, string | undefined>): string {
  if (model.baseUrl !== undefined) return model.baseUrl;
  const info = model.provider === undefined ? undefined : PROVIDERS[model.provider];
  const fromEnv = info?.urlVariable === undefined ? undefined : env[info.urlVariable]?.trim();
  return fromEnv || (info?.defaultUrl ?? '');
}

export type Reach = (url: string, key: string | undefined) => Promise<string | undefined>;

/** A reachability check kept for a few seconds per address: undefined when it answered, else why not. */
export function cachedReach(clock: () => number = Date.now): Reach {
  const seen = new Map<string, { at: number; answer: Promise<string | undefined> }>();
  return (url, key) => {
    const cached = seen.get(url);
    if (cached !== undefined && clock() - cached.at < REACH_CACHE_MS) return cached.answer;
    const answer = reach(url, key);
    seen.set(url, { at: clock(), answer });
    return answer;
  };
}

async function reach(baseUrl: string, key: string | undefined): Promise<string | undefined> {
  const url = `${baseUrl}/models`;
  try {
    const response = await fetch(url, {
      headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(REACH_TIMEOUT_MS),
    });
    await response.body?.cancel();
    // a server that answers at all is up; only a refused key says more
    if (response.status === 401 || response.status === 403) return `${url} refused the key (HTTP ${response.status})`;
    return undefined;
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
    return timedOut ? `no answer from ${url} within ${REACH_TIMEOUT_MS / 1000} s` : `could not reach ${url}`;
  }
}

/** Each model, and whether it can run with this environment now. */
export async function modelStatuses(
  models: readonly ConfiguredModel[],
  env: Record<string, string | undefined>,
  check: Reach,
): Promise<ModelStatus[]> {
  return Promise.all(
    models.map(async (model) => {
      const variable = keyVariableOf(model);
      const missing = missingKey(model, env);
      let reason = missing === undefined ? undefined : `${missing} is not set where the engine runs`;
      if (reason === undefined && model.provider === 'openai-compatible') {
        reason = await check(baseUrlOf(model, env), variable === undefined ? undefined : env[variable]?.trim());
      }
      return {
        id: model.id,
        ...(model.id === DEFAULT_AI_MODEL ? { default: true } : {}),
        available: reason === undefined,
        ...(variable === undefined ? {} : { key_variable: variable }),
        ...(reason === undefined ? {} : { reason }),
        ...(model.provider === undefined ? {} : { provider: model.provider, model: model.model ?? model.id }),
        ...(model.baseUrl === undefined ? {} : { base_url: model.baseUrl }),
        source: model.source,
      };
    }),
  );
}
