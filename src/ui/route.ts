/** The page's places, read from `location.hash`. Pure. */

export type Route =
  | { page: 'deployments' }
  | { page: 'deployment'; id: string }
  | { page: 'tests' }
  | { page: 'test'; id: string }
  | { page: 'alerts' }
  | { page: 'server'; id: string; tool?: string }
  | { page: 'not-found'; path: string };

// ids as the engine makes them (deploy_…, test_…): anything else is not one of its pages
const ID = /^[A-Za-z0-9_-]{1,100}$/;

// tool names as definitions allow them (src/definition/names.ts)
const TOOL = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The route of a hash: `#/`, `#/d/<deployment_id>`, `#/tests`, `#/tests/<id>`, `#/alerts`,
 * `#/servers/<mcp_id>` and `#/servers/<mcp_id>/tools/<name>`. A hash that carries the log-in code
 * (`#code=…`) or nothing at all is the start page.
 */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '');
  if (path === '' || path === '/' || !path.startsWith('/')) return { page: 'deployments' };
  const parts = path.slice(1).replace(/\/$/, '').split('/');
  const [first, second, ...rest] = parts.map((part) => safeDecode(part));
  if (first === 'servers' && second !== undefined && ID.test(second)) return serverRoute(second, rest, path);
  if (rest.length > 0 || first === undefined) return { page: 'not-found', path };
  if (first === 'd' && second !== undefined && ID.test(second)) return { page: 'deployment', id: second };
  if (first === 'tests' && second === undefined) return { page: 'tests' };
  if (first === 'tests' && second !== undefined && ID.test(second)) return { page: 'test', id: second };
  if (first === 'alerts' && second === undefined) return { page: 'alerts' };
  return { page: 'not-found', path };
}

/** The hash of a route, for links. */
export function routeHref(route: Route): string {
  switch (route.page) {
    case 'deployments':
      return '#/';
    case 'deployment':
      return `#/d/${encodeURIComponent(route.id)}`;
    case 'tests':
      return '#/tests';
    case 'test':
      return `#/tests/${encodeURIComponent(route.id)}`;
    case 'alerts':
      return '#/alerts';
    case 'server':
      return route.tool === undefined
        ? `#/servers/${encodeURIComponent(route.id)}`
        : `#/servers/${encodeURIComponent(route.id)}/tools/${encodeURIComponent(route.tool)}`;
    case 'not-found':
      return `#${route.path}`;
  }
}

/** `#/servers/<id>` and `#/servers/<id>/tools/<name>`: a server's page, scrolled to one tool. */
function serverRoute(id: string, rest: string[], path: string): Route {
  if (rest.length === 0) return { page: 'server', id };
  const [kind, name, ...more] = rest;
  if (kind === 'tools' && name !== undefined && TOOL.test(name) && more.length === 0)
    return { page: 'server', id, tool: name };
  return { page: 'not-found', path };
}

/** The link to a tool on its server's page; none for a name no definition may have. */
export function toolHref(mcpId: string, tool: string): string | undefined {
  return ID.test(mcpId) && TOOL.test(tool) ? routeHref({ page: 'server', id: mcpId, tool }) : undefined;
}

/** The one-time log-in code of a fragment `#code=<code>`, if there is one. */
export function loginCode(hash: string): string | undefined {
  const match = /^#code=([A-Za-z0-9_-]{1,200})$/.exec(hash);
  return match?.[1];
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
