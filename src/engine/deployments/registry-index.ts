/**
 * Deployments grouped by a key that does not change while one is in memory (its domain, its
 * server and environment): the registry keeps one in step with its deployments, so a lookup
 * reads one group, however many deployments the engine has. A group keeps the order its members
 * were added in.
 */
export class GroupIndex<T> {
  private readonly groups = new Map<string, Set<T>>();

  add(key: string, member: T): void {
    let group = this.groups.get(key);
    if (group === undefined) {
      group = new Set();
      this.groups.set(key, group);
    }
    group.add(member);
  }

  delete(key: string, member: T): void {
    const group = this.groups.get(key);
    if (group === undefined) return;
    group.delete(member);
    if (group.size === 0) this.groups.delete(key);
  }

  /** The members under `key`, in the order they were added (empty when none). */
  get(key: string): ReadonlySet<T> {
    return this.groups.get(key) ?? EMPTY;
  }

  has(key: string): boolean {
    return this.groups.has(key);
  }

  /** how many keys have members (for tests) */
  get size(): number {
    return this.groups.size;
  }
}

const EMPTY: ReadonlySet<never> = new Set();
