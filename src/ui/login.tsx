/**
 * The log-in form for a team's engine (`mcpctl serve`): the API key is typed and sent in a POST body,
 * never put in a URL. `mcpctl dashboard` logs in with a one-time code instead (app.tsx).
 */
import { useState } from 'preact/hooks';
import type { Session } from './api-types.js';
import { describeError, openSession } from './api.js';

export function LoginForm({
  reason,
  onSession,
}: {
  reason: string | undefined;
  onSession: (session: Session) => void;
}) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    if (key.trim() === '') {
      setError('Enter the API key.');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const session = await openSession({ api_key: key.trim() });
      setKey('');
      onSession(session);
    } catch (failure) {
      const { message, hint } = describeError(failure);
      setError(hint === undefined ? message : `${message} ${hint}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card login" onSubmit={(event) => void submit(event)}>
      <h2>Log in</h2>
      {reason === undefined ? null : <p class="notice">{reason}</p>}
      <p class="muted">
        Run <code>mcpctl dashboard</code> on the engine's machine to open this page logged in, or enter the engine's API
        key (<code>mcpctl serve</code> printed it when it started).
      </p>
      <label for="api-key">API key</label>
      <input
        id="api-key"
        type="password"
        autocomplete="current-password"
        value={key}
        onInput={(event) => setKey(event.currentTarget.value)}
        aria-describedby={error === undefined ? undefined : 'login-error'}
        required
      />
      {error === undefined ? null : (
        <p id="login-error" class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Logging in…' : 'Log in'}
      </button>
    </form>
  );
}
