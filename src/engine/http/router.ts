/**
 * A small router: exact segments and `:name` parameters. Tells "no such path" (404) from "no such
 * method on this path" (405 with Allow). Pure.
 */
export interface RouteMatch<T> {
  route: T;
  params: Record<string, string>;
}

export type RouteLookup<T> =
  { kind: 'found'; match: RouteMatch<T> } | { kind: 'not_found' } | { kind: 'method_not_allowed'; allow: string[] };

interface Entry<T> {
  method: string;
  segments: string[];
  route: T;
}

export class Router<T> {
  private readonly entries: Entry<T>[] = [];

  add(method: string, pattern: string, route: T): this {
    this.entries.push({ method, segments: split(pattern), route });
    return this;
  }

  lookup(method: string, path: string): RouteLookup<T> {
    const segments = split(path);
    const allow = new Set<string>();
    for (const entry of this.entries) {
      const params = matchSegments(entry.segments, segments);
      if (params === undefined) continue;
      if (entry.method === method || (method === 'HEAD' && entry.method === 'GET')) {
        return { kind: 'found', match: { route: entry.route, params } };
      }
      allow.add(entry.method);
    }
    if (allow.size === 0) return { kind: 'not_found' };
    if (allow.has('GET')) allow.add('HEAD');
    return { kind: 'method_not_allowed', allow: [...allow].sort() };
  }
}

function split(path: string): string[] {
  // One trailing slash is forgiven: /v1/servers/ is /v1/servers.
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/').slice(1);
}

function matchSegments(pattern: string[], actual: string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i += 1) {
    const want = pattern[i]!;
    const got = actual[i]!;
    if (want.startsWith(':')) {
      if (got === '') return undefined;
      let value: string;
      try {
        value = decodeURIComponent(got);
      } catch {
        return undefined;
      }
      params[want.slice(1)] = value;
    } else if (want !== got) {
      return undefined;
    }
  }
  return params;
}
