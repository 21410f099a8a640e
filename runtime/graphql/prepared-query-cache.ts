/**
 * Parsing, rewriting and validating a query against R4's schema costs more than running a simple
 * one. Clients send the same query texts again and again (values travel in
 * variables), so parsed and prepared queries are kept per schema, the least recently used
 * dropped first.
 */
import {
  GraphQLError,
  Lexer,
  Source,
  TokenKind,
  parse,
  type DocumentNode,
  type GraphQLSchema,
} from 'graphql';
import { prepareFhirQuery } from './fhir-query.js';
import { type PreparedQuery } from './prepared-query.js';

const CAPACITY = 500;
const caches = new WeakMap<GraphQLSchema, Map<string, ParsedQuery>>();

/**
 * A parsed query text; rewriting and validating it (`prepared`) happens on first use, so that a
 * query the limits refuse — which only need the parsed text — costs no more than its parsing:
 * validating a text of 10,000 aliased fields takes most of a second.
 */
export interface ParsedQuery {
  readonly document: DocumentNode;
  prepared(): PreparedQuery;
}

/** The parsed query; a syntax error is thrown as graphql's GraphQLError, and not kept. */
export function parseCached(schema: GraphQLSchema, text: string): ParsedQuery {
  let cache = caches.get(schema);
  if (!cache) caches.set(schema, (cache = new Map()));
  const hit = cache.get(text);
  if (hit) {
    cache.delete(text);
    cache.set(text, hit);
    return hit;
  }
  checkNesting(text);
  const document: DocumentNode = parse(text);
  let prepared: PreparedQuery | undefined;
  const parsed = { document, prepared: () => (prepared ??= prepareFhirQuery(schema, document)) };
  cache.set(text, parsed);
  if (cache.size > CAPACITY) cache.delete(cache.keys().next().value!);
  return parsed;
}

/**
 * graphql-js parses recursively: some thousands of nested braces, brackets or parentheses
 * overflow the stack (a 500). Counted on the tokens first, far past anything a query needs (the
 * depth limit allows 15 levels of selections; FHIR resources as literals nest a few dozen).
 */
export const MAX_NESTING = 500;

function checkNesting(text: string): void {
  const source = new Source(text);
  const lexer = new Lexer(source);
  let depth = 0;
  for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
    if (OPENING.has(token.kind) && ++depth > MAX_NESTING) {
      throw new GraphQLError(
        `The query nests braces, brackets and parentheses more than ${MAX_NESTING} deep`,
        { source, positions: [token.start] },
      );
    }
    if (CLOSING.has(token.kind)) depth--;
  }
}

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);
