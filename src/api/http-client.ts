/**
 * The parts of undici the `/v1` client uses (the keep-alive `Agent` and `request`), loaded without the rest.
 *
 * undici's index loads every dispatcher, the mock agents, fetch, WebSocket, the cache stores and the
 * cookie helpers (111 files) whichever part is imported; the three files below load 26. Measured on
 * the 2-core development machine (medians of alternating runs): +250 to 300 ms wall and +195 ms CPU
 * over `node -e 0` for the index, +80 to 125 ms and +65 to 80 ms for these; `mcpctl status` and `ls`
 * against a running engine got 90 to 120 ms faster. Every command that calls a service paid that
 * before its first request.
 *
 * These paths are undici internals, reachable because its package.json has no "exports" field;
 * checked against undici 7.30.2. test/api/http-client.unit.test.ts fails when they stop giving what
 * is used here (after an upgrade, say); an installed undici where they do not still works, through
 * the whole package, only slower.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';
import type { Agent as UndiciAgent, Dispatcher } from 'undici';

type RequestOnDispatcher = (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;

interface Parts {
  Agent: typeof UndiciAgent;
  request: RequestOnDispatcher;
  /** false when the internal paths failed and the whole package was loaded instead */
  light: boolean;
}

function loadParts(): Parts {
  const load = createRequire(import.meta.url);
  try {
    const Agent: unknown = load('undici/lib/dispatcher/agent.js');
    const request: unknown = load('undici/lib/api/api-request.js');
    // As undici's index does: makes an undici Agent the dispatcher of Node's global `fetch` unless one
    // is set. The CLI's engine health check is such a fetch; without this it would run on Node's
    // own copy of undici's connection code as well (measured: +80 ms CPU for `mcpctl status`).
    load('undici/lib/global.js');
    if (typeof Agent === 'function' && typeof (Agent.prototype as { dispatch?: unknown }).dispatch === 'function' && typeof request === 'function') {
      return { Agent: Agent as typeof UndiciAgent, request: request as RequestOnDispatcher, light: true };
    }
  } catch {
    // moved in this undici version: fall through to the whole package
  }
  const undici = load('undici') as typeof Undici;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the dispatcher as `this`, as undici's own `request()` does
  const request = undici.Dispatcher.prototype.request;
  return { Agent: undici.Agent, request, light: false };
}

const parts = loadParts();

/** undici's `Agent`. */
export const Agent = parts.Agent;

/** Whether the light paths loaded (the unit test checks it; the client works either way). */
export const loadedLight = parts.light;

export type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Dispatcher };

/**
 * undici's `request(url, options)` for a caller that always names the dispatcher (any undici
 * `Dispatcher`): the URL gives the origin and the path with its query, as undici's own does.
 */
export function request(url: string, { dispatcher, ...options }: RequestOptions): Promise<Dispatcher.ResponseData> {
  const target = new URL(url);
  return parts.request.call(dispatcher, { ...options, origin: target.origin, path: target.pathname + target.search });
}
