/**
 * Parsing, rewriting and validating a query against R4's schema costs more than running a simple
 * one. Clients send the same query texts again and again (values travel in variables), so
 * parsed and prepared queries are kept per schema, the least recently used dropped first.
 *
 * What a text may cost is bounded before anything is kept: its size and its tokens are counted
 * before it is parsed (a parsed query holds about a hundred bytes of heap per character of its
 * text), and the caller keeps it (`keepQuery`) only once the query limits have passed it. The
 * cache itself is bounded by its tokens as well as its entries.
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
import { BoundedLru } from '../store/bounded-lru.js';
import { prepareFhirQuery } from './fhir-query.js';
import { type PreparedQuery } from './prepared-query.js';

/** Query texts kept per schema at most, and their tokens together. */
const MAX_ENTRIES = 500;
const MAX_TOKENS_KEPT = 128 * 1024;
const caches = new WeakMap<GraphQLSchema, BoundedLru<ParsedQuery>>();

/** The most a query text may be: its UTF-8 bytes, and its tokens (comments left out). */
export interface QuerySizeLimits {
  readonly maxQueryBytes: number;
  readonly maxTokens: number;
}

/**
 * A parsed query text; rewriting and validating it (`prepared`) happens on first use, so that a
 * query the limits refuse — which only need the parsed text — costs no more than its parsing.
 */
export interface ParsedQuery {
  readonly document: DocumentNode;
  readonly tokens: number;
  prepared(): PreparedQuery;
}

/**
 * The parsed query: kept from an earlier request, or parsed now and not yet kept. A syntax error,
 * or a text past `limits`, is thrown as a GraphQLError.
 */
export function parseQuery(
  schema: GraphQLSchema,
  text: string,
  limits: QuerySizeLimits,
): ParsedQuery {
  const hit = caches.get(schema)?.get(text);
  if (hit) return hit;
  const bytes = Buffer.byteLength(text);
  if (bytes > limits.maxQueryBytes)
    throw new GraphQLError(
      `The query is ${bytes} bytes long; the maximum is ${limits.maxQueryBytes}`,
      { extensions: { code: 'QUERY_LIMIT' } },
    );
  const tokens = countTokens(text, limits.maxTokens);
  const document: DocumentNode = parse(text, { maxTokens: limits.maxTokens });
  let prepared: PreparedQuery | undefined;
  return {
    document,
    tokens,
    prepared: () => (prepared ??= prepareFhirQuery(schema, document)),
  };
}

/** Keeps a query the limits passed, for the next request with the same text. */
export function keepQuery(schema: GraphQLSchema, text: string, parsed: ParsedQuery): void {
  let cache = caches.get(schema);
  if (!cache) caches.set(schema, (cache = new BoundedLru(MAX_ENTRIES, MAX_TOKENS_KEPT)));
  if (!cache.has(text)) cache.set(text, parsed, parsed.tokens);
}

/** What the cache of `schema` holds (for tests). */
export function keptQueries(schema: GraphQLSchema): { entries: number; size: number } {
  return caches.get(schema)?.usage ?? { entries: 0, size: 0 };
}

/**
 * graphql-js parses recursively: some thousands of nested braces, brackets or parentheses
 * overflow the stack (a 500). Counted on the tokens first, far past anything a query needs (the
 * depth limit allows 15 levels of selections; FHIR resources as literals nest a few dozen).
 */
export const MAX_NESTING = 500;

/** The text's tokens, comments left out; throws past `maxTokens` or MAX_NESTING. */
function countTokens(text: string, maxTokens: number): number {
  const source = new Source(text);
  const lexer = new Lexer(source);
  let depth = 0;
  let tokens = 0;
  for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
    if (++tokens > maxTokens)
      throw new GraphQLError(`The query has more than ${maxTokens} tokens`, {
        source,
        positions: [token.start],
        extensions: { code: 'QUERY_LIMIT' },
      });
    if (OPENING.has(token.kind) && ++depth > MAX_NESTING) {
      throw new GraphQLError(
        `The query nests braces, brackets and parentheses more than ${MAX_NESTING} deep`,
        { source, positions: [token.start] },
      );
    }
    if (CLOSING.has(token.kind)) depth--;
  }
  return tokens;
}

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);
