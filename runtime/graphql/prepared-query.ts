import type { DocumentNode, GraphQLError } from 'graphql';

/** A query text parsed, rewritten from FHIR's dialect and validated, ready to run again and again. */
export interface PreparedQuery {
  /** The query as the client wrote it: limits and directives read this one. */
  readonly document: DocumentNode;
  /** The standard GraphQL query that runs. */
  readonly executable: DocumentNode;
  /** Validation errors; the query runs only when there are none. */
  readonly errors: readonly GraphQLError[];
  /** Whether FHIR's shaping directives (@flatten, @slice…) reshape the result. */
  readonly shaped: boolean;
  /** Whether it selects `resource` anywhere, so may follow a `#id` reference (contained.ts). */
  readonly resolvesReferences: boolean;
}
