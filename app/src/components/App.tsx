/**
 * The app: the sign-in page until there is a token, then the page the address names. A token
 * that expires, or that the server refuses (401), brings the sign-in page back, saying why.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { AppContext, type AppServices } from '../lib/app-context.js';
import { FhirClient } from '../lib/fhir-client.js';
import { routeOf } from '../lib/route.js';
import { sessionOf, storedToken, storeToken, type Session } from '../lib/session.js';
import { Layout } from './Layout.js';
import { Page } from './Page.js';
import { SignIn } from './SignIn.js';

/** setTimeout's longest delay; a later expiry is checked again when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export function App() {
  const [session, setSession] = useState<Session | undefined>(() => restoredSession());
  const [notice, setNotice] = useState<string | undefined>();
  const [location, setLocation] = useState(() => ({
    pathname: window.location.pathname,
    search: window.location.search,
  }));

  useEffect(() => {
    const moved = () =>
      setLocation({ pathname: window.location.pathname, search: window.location.search });
    window.addEventListener('popstate', moved);
    return () => window.removeEventListener('popstate', moved);
  }, []);

  const signIn = useCallback((next: Session) => {
    storeToken(next.token);
    setNotice(undefined);
    setSession(next);
  }, []);
  const signOut = useCallback((why?: string) => {
    storeToken(undefined);
    setNotice(why);
    setSession(undefined);
  }, []);

  useEffect(() => {
    if (!session) return;
    const delay = Math.min(session.expiresAt - Date.now(), MAX_TIMER_MS);
    const timer = setTimeout(
      () => {
        if (session.expiresAt <= Date.now()) signOut('Your session expired: sign in again.');
      },
      Math.max(delay, 0),
    );
    return () => clearTimeout(timer);
  }, [session, signOut]);

  const navigate = useCallback((href: string) => {
    window.history.pushState(null, '', href);
    setLocation({ pathname: window.location.pathname, search: window.location.search });
    window.scrollTo(0, 0);
  }, []);

  const services = useMemo<AppServices | undefined>(
    () =>
      session && {
        session,
        navigate,
        client: new FhirClient(session.token, () =>
          signOut(
            'The server no longer accepts your token (it expired or was revoked): sign in again.',
          ),
        ),
      },
    [session, navigate, signOut],
  );

  if (!services) return <SignIn onSignedIn={signIn} notice={notice} />;
  const route = routeOf(location.pathname, location.search);
  return (
    <AppContext.Provider value={services}>
      <Layout onSignOut={() => signOut()}>
        <Page route={route} />
      </Layout>
    </AppContext.Provider>
  );
}

/** The tab's stored token, unless it has expired or cannot be read. */
function restoredSession(): Session | undefined {
  const token = storedToken();
  if (!token) return undefined;
  try {
    const session = sessionOf(token);
    if (session.expiresAt > Date.now()) return session;
  } catch {
    // An unreadable token is as good as none: the sign-in page asks for another.
  }
  storeToken(undefined);
  return undefined;
}
