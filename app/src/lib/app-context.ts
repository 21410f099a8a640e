/** What every page uses: the session, a client carrying its token, and navigation. */
import { createContext, useContext } from 'react';
import type { FhirClient } from './fhir-client.js';
import type { Session } from './session.js';

export interface AppServices {
  readonly session: Session;
  readonly client: FhirClient;
  /** Goes to an address of the app without reloading the page. */
  readonly navigate: (href: string) => void;
}

export const AppContext = createContext<AppServices | undefined>(undefined);

export function useApp(): AppServices {
  const services = useContext(AppContext);
  if (!services) throw new Error('useApp() outside the signed-in app');
  return services;
}
