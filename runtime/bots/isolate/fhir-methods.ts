/** The methods fhir-client.ts implements: the prelude (fhir-prelude.ts) makes a stub for each. */
export const CLIENT_METHODS =
  'getBaseUrl fhirUrl fhirSearchUrl readResource readReference readCanonical readHistory readVersion search searchOne searchResources searchResourcePages createResource createResourceIfNoneExist updateResource upsertResource patchResource deleteResource executeBatch graphql executeBot createBinary download get post put patch delete invalidateUrl invalidateAll invalidateSearches clear getCached getCachedReference isLoading getInitPromise';
