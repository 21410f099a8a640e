/**
 * MedplumClient methods a bot's `fhir` client has but cannot honour: they need services Graphir
 * does not have (email, PDF rendering, agents, CDS hooks, bulk export), or a user's login, which
 * a bot has not. Each throws an error naming itself, rather than "not a function"; those that
 * return a promise in Medplum reject, the others throw.
 */
import type { FhirCore, Methods } from './fhir-core.js';

export const UNSUPPORTED_ASYNC =
  'sendEmail createPdf createAttachment createComment createDocumentReference createMedia uploadMedia uploadwithProgress pushToAgent bulkExport startAsyncRequest valueSetExpand readPatientEverything readPatientSummary readResourceGraph validateResource requestSchema requestProfileSchema getCdsServices callCdsService getProfileAsync downloadResponse wrappedFetch startNewUser startNewProject startNewPatient startLogin startGoogleLogin signOut signInWithRedirect signInWithExternalAuth exchangeExternalAccessToken ensureCodeChallenge setActiveLogin';

export const UNSUPPORTED_SYNC =
  'getProfile getProject getProjectMembership getAccessPolicy getUserConfiguration getActiveLogin getLogins getAccessToken setAccessToken isAuthenticated isSuperAdmin isProjectAdmin getDefaultHeaders getAuthorizeUrl getTokenUrl getLogoutUrl getFhircastHubUrl getCdsServicesUrl getExternalAuthRedirectUri signOutWithRedirect';

/** A part of the client (fhir-core.ts): each method throws, or rejects, saying it is not here. */
export function unsupportedMethods({ ErrorType }: FhirCore): Methods {
  const methods: Methods = {};
  for (const method of UNSUPPORTED_ASYNC.split(' '))
    methods[method] = () => Promise.reject(new ErrorType(unsupportedMessage(method)));
  for (const method of UNSUPPORTED_SYNC.split(' '))
    methods[method] = () => {
      throw new ErrorType(unsupportedMessage(method));
    };
  return methods;
}

function unsupportedMessage(method: string): string {
  return `fhir.${method} is not supported by Graphir's bot client`;
}
