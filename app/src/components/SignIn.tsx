/** Sign-in: a client id and secret (client credentials at /oauth2/token), or a pasted token. */
import { useState } from 'react';
import { sessionOf, tokenByClientCredentials, type Session } from '../lib/session.js';
import { ErrorMessage } from './ErrorMessage.js';

export interface SignInProps {
  readonly onSignedIn: (session: Session) => void;
  /** Why the user is asked again (an expired token). */
  readonly notice?: string | undefined;
}

export function SignIn({ onSignedIn, notice }: SignInProps) {
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [token, setToken] = useState('');
  const [error, setError] = useState<Error | undefined>();
  const [busy, setBusy] = useState(false);

  const accept = (accessToken: string) => {
    const session = sessionOf(accessToken.trim());
    if (!session.projectId)
      throw new Error(
        'This is the root client’s token, which reads no FHIR data: use a project’s client.',
      );
    if (session.expiresAt <= Date.now()) throw new Error('This token has expired.');
    onSignedIn(session);
  };

  const withCredentials = async () => {
    setBusy(true);
    setError(undefined);
    try {
      accept(await tokenByClientCredentials(clientId.trim(), clientSecret));
    } catch (caught) {
      setError(caught as Error);
    } finally {
      setBusy(false);
    }
  };
  const withToken = () => {
    setError(undefined);
    try {
      accept(token);
    } catch (caught) {
      setError(caught as Error);
    }
  };

  return (
    <main id="main" className="sign-in">
      <h1>Sign in to Graphir</h1>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      {error && <ErrorMessage error={error} />}
      <form
        aria-labelledby="credentials-heading"
        onSubmit={(event) => {
          event.preventDefault();
          void withCredentials();
        }}
      >
        <h2 id="credentials-heading">With a client’s id and secret</h2>
        <label htmlFor="client-id">Client id</label>
        <input
          id="client-id"
          name="client_id"
          autoComplete="username"
          required
          value={clientId}
          onChange={(event) => setClientId(event.currentTarget.value)}
        />
        <label htmlFor="client-secret">Client secret</label>
        <input
          id="client-secret"
          name="client_secret"
          type="password"
          autoComplete="current-password"
          required
          value={clientSecret}
          onChange={(event) => setClientSecret(event.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <form
        aria-labelledby="token-heading"
        onSubmit={(event) => {
          event.preventDefault();
          withToken();
        }}
      >
        <h2 id="token-heading">With an access token</h2>
        <label htmlFor="access-token">Access token</label>
        <textarea
          id="access-token"
          name="token"
          rows={3}
          spellCheck={false}
          required
          value={token}
          onChange={(event) => setToken(event.currentTarget.value)}
        />
        <button type="submit">Use token</button>
      </form>
      <p className="hint">
        The token is kept in this tab only (session storage), never in a cookie, and the GraphQL
        playground of this tab uses it too.
      </p>
    </main>
  );
}
