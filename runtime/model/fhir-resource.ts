/**
 * A FHIR resource as JSON, whatever its type: what the store keeps and every layer passes on.
 * Code that knows the type narrows it with the generated interfaces (generated/types/).
 * @see http://hl7.org/fhir/R4/json.html#resources
 */
export type FhirResource = { readonly resourceType: string; readonly id?: string } & Record<
  string,
  unknown
>;
