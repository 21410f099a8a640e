/**
 * Errors of a shared plan point into its shape's text (query-shape.ts); each client gets them
 * pointing into its own query. Shape and query have the same tokens in the same order, so a
 * position maps to the same token's position in the query, plus its offset within the token.
 */
import { GraphQLError, Lexer, Source, TokenKind } from 'graphql';
import type { QueryShape } from './query-shape.js';

export function relocateErrors(
  errors: readonly GraphQLError[],
  text: string,
  shape: QueryShape,
): GraphQLError[] {
  let source: Source | undefined;
  let planStarts: number[] | undefined;
  return errors.map((error) => {
    if (!error.locations?.length) return error;
    source ??= new Source(text);
    planStarts ??= tokenStarts(shape.key);
    // The shape is one line, so a column is its offset plus one.
    const positions = error.locations.map(({ column }) => {
      const offset = column - 1;
      const token = lastAtOrBefore(planStarts!, offset);
      return shape.textStarts[token] + offset - planStarts![token];
    });
    return new GraphQLError(error.message, {
      source,
      positions,
      path: error.path,
      originalError: error.originalError,
      extensions: error.extensions,
    });
  });
}

/** Where each token of `text` starts; errors are rare, so the shape's are not kept. */
function tokenStarts(text: string): number[] {
  const lexer = new Lexer(new Source(text));
  const starts: number[] = [];
  for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance())
    starts.push(token.start);
  return starts;
}

/** The index of the last start at or before `offset` (starts ascend). */
function lastAtOrBefore(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle] <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}
