/**
 * The caching hints of the 2026-07-28 revision (`ttlMs`, `cacheScope`) as a definition gives them:
 * the server's `cache` for its lists, and each resource's (or else the server's) for its reads.
 * A result that differs from one caller to the next is never `public`, whatever the definition
 * says: a shared cache would hand one user's answer to another.
 */
import type { CacheHint, ServerContext, ServerOptions } from '@modelcontextprotocol/server';
import type { ResourceDefinition } from '../../definition/schema.js';
import type { RuntimeDefinition } from './runtime-types.js';

type DefinitionCache = NonNullable<RuntimeDefinition['cache']>;
export type ListCacheHints = NonNullable<ServerOptions['cacheHints']>;

function hintOf(cache: DefinitionCache | undefined, forcePrivate: boolean): CacheHint | undefined {
  if (cache === undefined) return forcePrivate ? { cacheScope: 'private' } : undefined;
  return { ttlMs: cache.ttl_ms, cacheScope: forcePrivate ? 'private' : (cache.scope ?? 'private') };
}

/**
 * The hints of the lists: the server's `cache`. The resource lists show each caller only what
 * `users:` lets them see, so with such a resource they are private.
 */
export function listCacheHints(definition: RuntimeDefinition): ListCacheHints {
  const perCaller = (definition.resources ?? []).some((resource) => resource.users !== undefined);
  const lists = hintOf(definition.cache, false);
  const resourceLists = hintOf(definition.cache, perCaller);
  const hints: ListCacheHints = {};
  if (lists !== undefined) {
    hints['tools/list'] = lists;
    hints['prompts/list'] = lists;
  }
  if (resourceLists !== undefined) {
    hints['resources/list'] = resourceLists;
    hints['resources/templates/list'] = resourceLists;
  }
  return hints;
}

/** The hint of a resource's reads: its own `cache`, else the server's; private when it depends on the caller. */
export function resourceCacheHint(
  resource: ResourceDefinition,
  serverCache: DefinitionCache | undefined,
  dependsOnCaller: boolean,
): CacheHint | undefined {
  return hintOf(resource.cache ?? serverCache, dependsOnCaller);
}

/**
 * The hint's fields on a result, for a client of the 2026-07-28 revision (its request carries the
 * per-request `_meta` envelope); older clients get the result as it was.
 */
export function withCacheFields<T extends object>(result: T, hint: CacheHint | undefined, ctx: ServerContext): T {
  if (hint === undefined || ctx.mcpReq.envelope === undefined) return result;
  return { ...result, ...hint };
}
