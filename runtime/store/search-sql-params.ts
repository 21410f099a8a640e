/**
 * Shared pieces of the search SQL builders (search-sql.ts): the parameter list every value goes
 * through, LIKE escaping, and the index tables by search parameter type.
 */
import { FhirError } from '../model/fhir-error.js';
import type { SearchType } from '../model/search-definition.js';

/** A search the store cannot answer (composite and special parameters, unknown modifiers). */
export class UnsupportedSearchError extends FhirError {
  constructor(message: string) {
    super(400, [{ severity: 'error', code: 'not-supported', diagnostics: message }]);
  }
}

/** The `$n` parameters of one statement. Values never enter the SQL text. */
export class SqlParams {
  readonly values: unknown[] = [];

  /** A new parameter, cast so that PostgreSQL and PGlite need not infer its type: `$3::text`. */
  add(value: unknown, cast: SqlCast): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}

export type SqlCast = 'text' | 'text[]' | 'numeric' | 'timestamptz' | 'bigint';

/** What a criterion or sort key sees: the parameters and the resource row `r` it applies to. */
export interface SqlContext {
  readonly params: SqlParams;
  /** The parameters holding the project id and the resource type (`$1::text`, `$2::text`). */
  readonly project: string;
  readonly resourceType: string;
}

/** The search types that have an index table; composite and special have none. */
export const INDEX_TABLES = {
  string: 'search_string',
  token: 'search_token',
  reference: 'search_reference',
  date: 'search_date',
  number: 'search_number',
  quantity: 'search_quantity',
  uri: 'search_uri',
} as const;

export type IndexedType = keyof typeof INDEX_TABLES;

export function isIndexedType(type: SearchType): type is IndexedType {
  return Object.hasOwn(INDEX_TABLES, type);
}

/**
 * `FROM search_<type> i WHERE …` restricted to the rows of parameter `code` of the resource whose
 * id is `idColumn` (resource `r` unless told), or of every resource of the type when it is
 * `null`; the caller adds the select list and any further condition on `i`.
 */
export function indexRows(
  context: SqlContext,
  type: IndexedType,
  code: string,
  idColumn: string | null = 'r.id',
): string {
  const { params, project, resourceType } = context;
  const ofResource = idColumn === null ? '' : ` AND i.id = ${idColumn}`;
  return (
    `FROM ${INDEX_TABLES[type]} i WHERE i.project_id = ${project}` +
    ` AND i.resource_type = ${resourceType}${ofResource} AND i.code = ${params.add(code, 'text')}`
  );
}

/**
 * Whether resource `r` (or the one whose id is `idColumn`) has a row of `code` in the index of
 * `type` (matching `condition`, if given).
 */
export function indexExists(
  context: SqlContext,
  type: IndexedType,
  code: string,
  condition?: string,
  idColumn = 'r.id',
): string {
  const where = condition === undefined ? '' : ` AND (${condition})`;
  return `EXISTS (SELECT 1 ${indexRows(context, type, code, idColumn)}${where})`;
}

/** Alternatives: `FALSE` when there are none. */
export function anyOf(conditions: readonly string[]): string {
  return conditions.length === 0 ? 'FALSE' : conditions.map((c) => `(${c})`).join(' OR ');
}

/** Requirements: `TRUE` when there are none. */
export function allOf(conditions: readonly string[]): string {
  return conditions.length === 0 ? 'TRUE' : conditions.map((c) => `(${c})`).join(' AND ');
}

/** `text` with LIKE's wildcards and escape character made literal (backslash is LIKE's default escape). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}
