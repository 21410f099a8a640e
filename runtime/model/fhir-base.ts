/** The FHIR base's path under the server root: `{root}/fhir/R4`. */
export const FHIR_BASE = '/fhir/R4';
