/** The frame of every signed-in page: a skip link, the navigation, who is signed in, the page. */
import type { ReactNode } from 'react';
import { useApp } from '../lib/app-context.js';
import { PLAYGROUND_HREF } from '../lib/fhir-client.js';
import { APP_ROOT } from '../lib/route.js';
import { Link } from './Link.js';

export interface LayoutProps {
  readonly children?: ReactNode;
  readonly onSignOut: () => void;
}

export function Layout({ children, onSignOut }: LayoutProps) {
  const { session } = useApp();
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top-bar">
        <Link href={APP_ROOT} className="brand">
          Graphir
        </Link>
        <nav aria-label="Main">
          <ul>
            <li>
              <Link href={APP_ROOT}>Resources</Link>
            </li>
            <li>
              <Link href={`${APP_ROOT}/Bot`}>Bots</Link>
            </li>
            <li>
              {/* A full page load: the server answers this address with the playground page. */}
              <a href={PLAYGROUND_HREF}>GraphQL playground</a>
            </li>
          </ul>
        </nav>
        <div className="who">
          <span title={session.scopeText}>
            Client <code>{session.clientId}</code>
            {session.admin ? ' (admin)' : ''}
          </span>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
