/**
 * Parsing, rewriting and validating a query against R4's schema costs more than running a simple
 * one. So queries that differ only in the values written into them (`Patient(id: "a1")`,
 * `Patient(id: "b2")`) share one plan: the query's shape (query-shape.ts) is parsed, validated
 * and, where it recurs, compiled once, and each text's values travel as variables. Plans are kept
 * per schema, the least recently used dropped first.
 *
 * A shape whose plan does not validate, or a value that does not fit its place, is checked as
 * written instead (the errors then point into the client's own text), and so is a text without a
 * shape: its own parse and plan are kept under the text.
 *
 * What a text may cost is bounded before anything is kept: its size and its tokens are counted
 * before it is parsed (a parsed query holds about a hundred bytes of heap per character of its
 * text), and the caller keeps it (`keep`) only once the query limits have passed it. The cache
 * itself is bounded by its tokens as well as its entries.
 */
import { GraphQLError, Kind, parse, visit, type DocumentNode, type GraphQLSchema } from 'graphql';
import { BoundedLru } from '../store/bounded-lru.js';
import { placeholderValues } from './argument-literals.js';
import { prepareFhirQuery } from './fhir-query.js';
import { type PreparedQuery } from './prepared-query.js';
import {
  PLACEHOLDER,
  PLACEHOLDER_PREFIX,
  readQueryShape,
  type Literal,
  type QueryShape,
} from './query-shape.js';
import { relocateErrors } from './relocate-errors.js';

/** Plans kept per schema at most, and their tokens together. */
const MAX_ENTRIES = 500;
const MAX_TOKENS_KEPT = 128 * 1024;
const caches = new WeakMap<GraphQLSchema, BoundedLru<Entry>>();

/** A parsed text or shape, and its plan once made. */
interface Entry {
  readonly document: DocumentNode;
  readonly tokens: number;
  plan?: PreparedQuery;
}

/** The most a query text may be: its UTF-8 bytes, and its tokens (comments left out). */
export interface QuerySizeLimits {
  readonly maxQueryBytes: number;
  readonly maxTokens: number;
}

/**
 * A query text read and parsed; its plan (`prepare`) is made on first use, so that a query the
 * limits refuse — which only need the parsed text — costs no more than its parsing.
 */
export interface ParsedQuery {
  /** What the limits measure, with `variables`. */
  readonly document: DocumentNode;
  readonly variables: Readonly<Record<string, unknown>>;
  /** Errors found on `document`, pointing into the client's text. */
  relocate(errors: readonly GraphQLError[]): GraphQLError[];
  /** Keeps it for the next request of the same shape or text. */
  keep(): void;
  prepare(): PreparedRun;
}

/** A plan with what this text adds to it. */
export interface PreparedRun {
  readonly query: PreparedQuery;
  /** The values written into this text, as the plan's variables. */
  readonly variables: Readonly<Record<string, unknown>>;
  /** Errors of the run, pointing into the client's text. */
  relocate(errors: readonly GraphQLError[]): GraphQLError[];
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
  const bytes = Buffer.byteLength(text);
  if (bytes > limits.maxQueryBytes)
    throw new GraphQLError(
      `The query is ${bytes} bytes long; the maximum is ${limits.maxQueryBytes}`,
      { extensions: { code: 'QUERY_LIMIT' } },
    );
  const shape = readQueryShape(text, limits.maxTokens);
  return shape?.shareable
    ? shapedQuery(schema, text, shape, limits)
    : exactQuery(schema, text, limits, shape?.tokens ?? 0);
}

function shapedQuery(
  schema: GraphQLSchema,
  text: string,
  shape: QueryShape,
  limits: QuerySizeLimits,
): ParsedQuery {
  const key = `S${shape.key}`;
  const entry = cache(schema).get(key) ?? {
    document: withPlaceholderVariables(parse(shape.key, { maxTokens: limits.maxTokens })),
    tokens: shape.tokens,
  };
  const relocate = (errors: readonly GraphQLError[]) => relocateErrors(errors, text, shape);
  return {
    document: entry.document,
    variables: roughValues(shape.literals),
    relocate,
    keep: () => keep(schema, key, entry),
    prepare: () => {
      const plan = (entry.plan ??= prepareFhirQuery(schema, entry.document, { fromShape: true }));
      const variables =
        plan.errors.length === 0
          ? placeholderValues(shape.literals, plan.placeholderTypes)
          : undefined;
      if (variables) return { query: plan, variables, relocate };
      // Checked as written: the errors are then the client's text's own.
      const exact = exactQuery(schema, text, limits, shape.tokens);
      exact.keep();
      return exact.prepare();
    },
  };
}

function exactQuery(
  schema: GraphQLSchema,
  text: string,
  limits: QuerySizeLimits,
  tokens: number,
): ParsedQuery {
  const key = `T${text}`;
  const entry = cache(schema).get(key) ?? {
    document: parse(text, { maxTokens: limits.maxTokens }),
    tokens,
  };
  const relocate = (errors: readonly GraphQLError[]) => [...errors];
  return {
    document: entry.document,
    variables: {},
    relocate,
    keep: () => keep(schema, key, entry),
    prepare: () => ({
      query: (entry.plan ??= prepareFhirQuery(schema, entry.document)),
      variables: {},
      relocate,
    }),
  };
}

function cache(schema: GraphQLSchema): BoundedLru<Entry> {
  let kept = caches.get(schema);
  if (!kept) caches.set(schema, (kept = new BoundedLru(MAX_ENTRIES, MAX_TOKENS_KEPT)));
  return kept;
}

function keep(schema: GraphQLSchema, key: string, entry: Entry): void {
  const kept = cache(schema);
  if (!kept.has(key)) kept.set(key, entry, entry.tokens);
}

/** What the cache of `schema` holds (for tests). */
export function keptQueries(schema: GraphQLSchema): { entries: number; size: number } {
  return caches.get(schema)?.usage ?? { entries: 0, size: 0 };
}

/** The shape's placeholders (enum-like names) as the variables they stand for. */
function withPlaceholderVariables(document: DocumentNode): DocumentNode {
  return visit(document, {
    EnumValue: (node) =>
      PLACEHOLDER.test(node.value)
        ? {
            kind: Kind.VARIABLE,
            loc: node.loc,
            name: { kind: Kind.NAME, loc: node.loc, value: node.value },
          }
        : undefined,
  });
}

/** The values as the limits read them (`_count: 100` as a number), before the plan types them. */
function roughValues(literals: readonly Literal[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  literals.forEach(({ kind, value }, n) => {
    values[`${PLACEHOLDER_PREFIX}${n}`] =
      kind === 'int' || kind === 'float'
        ? Number(value)
        : kind === 'name' && (value === 'true' || value === 'false')
          ? value === 'true'
          : value;
  });
  return values;
}
