/**
 * The values of one resource that search matches against, extracted at write time and stored
 * in the search_* tables (runtime/store/migrations/001-resources.sql), one row per value.
 * A parameter with no row for a resource is `:missing=true` for it.
 */

export interface StringIndexRow {
  readonly code: string;
  /** Lower case with accents removed (normalizeSearchText), for FHIR's case- and accent-insensitive match. */
  readonly value: string;
  /** The value as written, for `:exact`. */
  readonly exact: string;
}

export interface TokenIndexRow {
  readonly code: string;
  /** null: the value has no system (a code, a boolean, an identifier without system). */
  readonly system: string | null;
  /** null when only text is known (a CodeableConcept with text and no coding). */
  readonly value: string | null;
  /** Coding.display / CodeableConcept.text / Identifier.type.text, normalized, for `:text`. */
  readonly text: string | null;
}

export interface ReferenceIndexRow {
  readonly code: string;
  /** For `Patient/123` and for absolute URLs ending in `Patient/123`. */
  readonly targetType: string | null;
  readonly targetId: string | null;
  /** The reference as written when it is absolute or canonical, else null. */
  readonly url: string | null;
}

export interface DateIndexRow {
  readonly code: string;
  /** Inclusive, ISO instant in UTC; null: unbounded below (a Period without start). */
  readonly start: string | null;
  /** Exclusive, ISO instant in UTC; null: unbounded above (a Period without end). */
  readonly end: string | null;
}

export interface NumberIndexRow {
  readonly code: string;
  readonly value: number;
}

export interface QuantityIndexRow {
  readonly code: string;
  readonly value: number;
  readonly system: string | null;
  /** Quantity.code, or Quantity.unit when there is no code. */
  readonly unit: string | null;
}

export interface UriIndexRow {
  readonly code: string;
  readonly value: string;
}

export interface SearchIndexRows {
  readonly string: StringIndexRow[];
  readonly token: TokenIndexRow[];
  readonly reference: ReferenceIndexRow[];
  readonly date: DateIndexRow[];
  readonly number: NumberIndexRow[];
  readonly quantity: QuantityIndexRow[];
  readonly uri: UriIndexRow[];
}

/** Case- and accent-insensitive form of a string, for indexing and for search values alike. */
export function normalizeSearchText(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}
