import { type FormEvent, useState } from 'react';
import { api, type Who } from '../api-client.ts';

/**
 * The sign-in page of a server with users: an API token (from `quarry users add` or `quarry users
 * token add`), kept by the browser for this session as an HttpOnly cookie the page never reads.
 */
export function SignIn({ onSignedIn }: { onSignedIn: (who: Who) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await api.signIn(token.trim()));
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="sign-in" id="content">
      <h1>Sign in to Quarry</h1>
      <p className="muted">This server needs an API token. Your administrator creates one with quarry users add.</p>
      <form onSubmit={(event) => void submit(event)}>
        <label>
          API token
          <input
            type="password"
            autoComplete="current-password"
            value={token}
            onChange={(event) => setToken(event.target.value)}
            required
          />
        </label>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy || !token.trim()}>
          Sign in
        </button>
      </form>
    </main>
  );
}
