/**
 * A resource whose content depends on the caller (`per_user`, which `{{user.id}}` needs, or
 * `users`) may not be cached as `public`: a shared cache would hand one user's content to another.
 * Pure.
 */
import { asRecord, items, type CheckContext } from './walk.js';

export function checkCacheScopes({ def, error }: CheckContext): void {
  for (const [i, resource] of items(def.resources)) {
    if (asRecord(resource.cache)?.scope !== 'public') continue;
    if (resource.per_user === true || resource.users !== undefined)
      error(
        ['resources', i, 'cache', 'scope'],
        'a resource that depends on the caller cannot be cached as public: use scope private (or leave it out)',
      );
  }
}
