/**
 * The shape of the search maps that `npm run generate` writes to generated/search/, one per
 * resource type. Hand-written because generated code, the REST API and GraphQL all rely on it.
 */
/** @see http://hl7.org/fhir/R4/search.html#ptypes */
export type SearchType =
  | 'string'
  | 'token'
  | 'reference'
  | 'date'
  | 'number'
  | 'quantity'
  | 'uri'
  | 'composite'
  | 'special';

export interface SearchParameterDefinition {
  /** FHIR code, kebab-case: `address-city`. */
  readonly code: string;
  readonly type: SearchType;
  /** FHIRPath for this resource type; empty for parameters without one (`_text`, `_content`, `_query`). */
  readonly expression: string;
  /** Reference parameters: the resource types it may point to. */
  readonly targets?: readonly string[];
  /** Modifiers offered for this parameter (`exact`, `missing`, …). */
  readonly modifiers: readonly string[];
  /** Composite parameters: each component's parameter code and expression relative to the match. */
  readonly components?: readonly { readonly code: string; readonly expression: string }[];
}

export interface ResourceSearchDefinition {
  readonly resourceType: string;
  /** By FHIR code. */
  readonly parameters: Readonly<Record<string, SearchParameterDefinition>>;
  /** By GraphQL argument name (`address_city`, `name_exact`): `[code, modifier?]`. */
  readonly arguments: Readonly<Record<string, readonly [code: string, modifier?: string]>>;
}

/**
 * Parameters answered from the resource row's own columns (its id, its last update), never from
 * index rows: none are written for them (extract-search-index.ts), and searches compare the
 * columns (store/search-sql-criteria.ts).
 */
export const RESOURCE_COLUMN_PARAMETERS: ReadonlySet<string> = new Set(['_id', '_lastUpdated']);
