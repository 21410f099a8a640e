import type { DocumentNode, GraphQLError, GraphQLInputType } from 'graphql';

/**
 * A query parsed, rewritten from FHIR's dialect, fitted to the schema's types and validated, ready
 * to run again and again: for one text, or for every text of one shape (query-shape.ts).
 */
export interface PreparedQuery {
  /** The query as written (or its shape): limits and directives read this one. */
  readonly document: DocumentNode;
  /** The standard GraphQL query that runs. */
  readonly executable: DocumentNode;
  /** Validation errors; the query runs only when there are none. */
  readonly errors: readonly GraphQLError[];
  /** Whether FHIR's shaping directives (@flatten, @slice…) reshape the result. */
  readonly shaped: boolean;
  /** Whether it selects `resource` anywhere, so may follow a `#id` reference (contained.ts). */
  readonly resolvesReferences: boolean;
  /** The type of each placeholder's place (query-shape.ts), by its number. */
  readonly placeholderTypes: readonly (GraphQLInputType | undefined)[];
}
