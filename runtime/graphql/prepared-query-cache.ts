/**
 * Parsing, rewriting and validating a query against R4's schema costs about 0.4 ms, more than
 * running a simple one. Clients send the same query texts again and again (values travel in
 * variables), so prepared queries are kept per schema, the least recently used dropped first.
 */
import { parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import { prepareFhirQuery, type PreparedQuery } from './fhir-query.js';

const CAPACITY = 500;
const caches = new WeakMap<GraphQLSchema, Map<string, PreparedQuery>>();

/** The prepared query; a syntax error is thrown as graphql's GraphQLError, and not kept. */
export function prepareCached(schema: GraphQLSchema, text: string): PreparedQuery {
  let cache = caches.get(schema);
  if (!cache) caches.set(schema, (cache = new Map()));
  const hit = cache.get(text);
  if (hit) {
    cache.delete(text);
    cache.set(text, hit);
    return hit;
  }
  const document: DocumentNode = parse(text);
  const prepared = prepareFhirQuery(schema, document);
  cache.set(text, prepared);
  if (cache.size > CAPACITY) cache.delete(cache.keys().next().value!);
  return prepared;
}
