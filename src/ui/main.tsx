/**
 * The dashboard's entry: logs in and renders the app into the page's <main>. The log-in starts
 * before the first render, and once it has a session the list of deployments (the page a log-in link
 * opens) is fetched at once, while the page renders, not after it.
 */
import { render } from 'preact';
import { prefetch, setCsrf } from './api.js';
import { App, HEALTH_PATH, startSession } from './app.js';
import { parseRoute } from './route.js';
import { DEPLOYMENTS_PATHS } from './pages/deployments.js';

const starting = startSession().then((auth) => {
  if (auth.kind === 'ready') {
    setCsrf(auth.session.csrf);
    prefetch([...(parseRoute(location.hash).page === 'deployments' ? DEPLOYMENTS_PATHS : []), HEALTH_PATH]);
  }
  return auth;
});

const root = document.getElementById('app');
if (root !== null) render(<App starting={starting} />, root);
