/**
 * The shell: logging in, the header with the engine's version and health, the navigation and the page
 * of the current route. Logging in follows the engine's contract: a one-time code in the fragment
 * (`#code=…`, from `mcpctl dashboard`) is exchanged for a session cookie and removed from the address
 * at once; otherwise the cookie of an earlier visit is tried; else the log-in form.
 */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Health, Session } from './api-types.js';
import { currentSession, describeError, getJson, logout, onUnauthorized, openSession, setCsrf } from './api.js';
import { usePolling } from './hooks.js';
import { LoginForm } from './login.js';
import { AlertsPage } from './pages/alerts.js';
import { DeploymentPage } from './pages/deployment.js';
import { DeploymentsPage } from './pages/deployments.js';
import { TestRunPage, TestRunsPage } from './pages/tests.js';
import { ServerPage } from './pages/server.js';
import { loginCode, parseRoute, routeHref, type Route } from './route.js';

/** The engine's health, in the header of every page. */
export const HEALTH_PATH = '/v1/health';

export type Auth = { kind: 'checking' } | { kind: 'login'; reason?: string } | { kind: 'ready'; session: Session };

/** Logs in as the page opens (main.tsx starts it before the first render; a new log-in link again). */
export async function startSession(): Promise<Auth> {
  const code = loginCode(location.hash);
  let failed: string | undefined;
  if (code !== undefined) {
    try {
      return { kind: 'ready', session: await openSession({ code }) };
    } catch (error) {
      failed = `The log-in link did not work: ${describeError(error).message}. Or enter the API key.`;
    } finally {
      // the code is spent either way: keep it out of the history and of a reload
      history.replaceState(null, '', `${location.pathname}${location.search}#/`);
    }
  }
  // a spent link opened again where the browser is logged in already still shows the page
  const session = await currentSession();
  if (session !== undefined) return { kind: 'ready', session };
  return failed === undefined ? { kind: 'login' } : { kind: 'login', reason: failed };
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = (): void => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

/** `starting`: the log-in main.tsx began before rendering, used instead of a new one. */
export function App({ starting }: { starting?: Promise<Auth> }) {
  const [auth, setAuth] = useState<Auth>({ kind: 'checking' });
  const [startError, setStartError] = useState<unknown>(undefined);
  const login = useCallback((session: Session) => {
    setCsrf(session.csrf);
    setAuth({ kind: 'ready', session });
  }, []);
  useEffect(() => {
    onUnauthorized((reason) => {
      setCsrf(undefined);
      // the first request to find the session gone says why; the others that were under way say the same
      setAuth((old) => (old.kind === 'login' ? old : { kind: 'login', reason: `Your session ended: ${reason}` }));
    });
    let first = starting;
    const begin = (): void => {
      const auth = first ?? startSession();
      first = undefined;
      auth.then(
        (result) => (result.kind === 'ready' ? login(result.session) : setAuth(result)),
        (error: unknown) => setStartError(error),
      );
    };
    begin();
    // a new log-in link opened in a tab that shows the page already changes only the fragment
    const onHash = (): void => {
      if (loginCode(location.hash) !== undefined) begin();
    };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, [login, starting]);
  if (startError !== undefined) {
    const { message, hint } = describeError(startError);
    return (
      <Frame>
        <p class="error" role="alert">
          {message} {hint}
        </p>
      </Frame>
    );
  }
  if (auth.kind === 'checking')
    return (
      <Frame>
        <p class="muted">Connecting to the engine…</p>
      </Frame>
    );
  if (auth.kind === 'login')
    return (
      <Frame>
        <LoginForm reason={auth.reason} onSession={login} />
      </Frame>
    );
  const leave = (): void => {
    logout().then(
      () => undefined,
      () => undefined,
    );
    setCsrf(undefined);
    setAuth({ kind: 'login', reason: 'You logged out.' });
  };
  return <LoggedIn onLogout={leave} />;
}

function Frame({ children, nav }: { children: ComponentChildren; nav?: ComponentChildren }) {
  return (
    <>
      <header class="top">
        <a class="brand" href="#/">
          mcpctl
        </a>
        {nav}
      </header>
      <div class="content">{children}</div>
    </>
  );
}

const NAV: { label: string; route: Route; pages: Route['page'][] }[] = [
  { label: 'Deployments', route: { page: 'deployments' }, pages: ['deployments', 'deployment'] },
  { label: 'Tests', route: { page: 'tests' }, pages: ['tests', 'test'] },
  { label: 'Alerts', route: { page: 'alerts' }, pages: ['alerts'] },
];

function LoggedIn({ onLogout }: { onLogout: () => void }) {
  const route = useRoute();
  const health = usePolling((signal) => getJson<Health>(HEALTH_PATH, { signal }), 'health', 15_000);
  const nav = (
    <>
      <nav aria-label="Pages">
        {NAV.map((item) => (
          <a
            key={item.label}
            href={routeHref(item.route)}
            aria-current={item.pages.includes(route.page) ? 'page' : undefined}
          >
            {item.label}
          </a>
        ))}
      </nav>
      <div class="engine" aria-live="polite">
        {health.error !== undefined ? (
          <span class="badge badge-bad">engine unreachable</span>
        ) : health.data === undefined ? null : (
          <>
            <span
              class={`badge badge-${health.data.status === 'ok' || health.data.status === 'healthy' ? 'ok' : 'warn'}`}
            >
              {health.data.status}
            </span>{' '}
            <span class="muted">engine {health.data.version}</span>
          </>
        )}
        <button type="button" class="small" onClick={onLogout}>
          Log out
        </button>
      </div>
    </>
  );
  return <Frame nav={nav}>{page(route)}</Frame>;
}

function page(route: Route) {
  switch (route.page) {
    case 'deployments':
      return <DeploymentsPage />;
    case 'deployment':
      return <DeploymentPage key={route.id} id={route.id} />;
    case 'tests':
      return <TestRunsPage />;
    case 'test':
      return <TestRunPage key={route.id} id={route.id} />;
    case 'alerts':
      return <AlertsPage />;
    case 'server':
      return <ServerPage key={route.id} id={route.id} tool={route.tool} />;
    case 'not-found':
      return (
        <p class="notice">
          Nothing is at <code>{route.path}</code>. <a href="#/">See the deployments</a>.
        </p>
      );
  }
}
