/**
 * Queries that clients send again and again run as JavaScript compiled for them (graphql-jit)
 * rather than through graphql-js's interpreter, which resolves every field of every item through
 * generic code: a page of 100 Patients with names and addresses takes about half the CPU compiled
 * (bench Q8, docs/performance.md).
 *
 * A text is compiled at its COMPILE_AT-th run: compiling costs several times one interpreted run,
 * so a client sending ever new texts never pays for it. Only plain queries
 * are compiled. Queries that resolve references need graphql-js's `fieldResolver` (contained.ts
 * tracks which resource holds each object, for `#id` references), and queries shaped by FHIR's
 * directives compute slice keys there too (directives.ts); mutations stay interpreted, one at a
 * time, as they write.
 */
import { getOperationAST, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { PreparedQuery } from './prepared-query.js';

const COMPILE_AT = 2;

interface Compilation {
  runs: number;
  /** By operation name ('' for the only one); false when graphql-jit could not compile it. */
  readonly compiled: Map<string, CompiledQuery | false>;
}

const compilations = new WeakMap<PreparedQuery, Compilation>();

/** The query compiled, when it may and should be; undefined to interpret it. */
export function compiledQuery(
  query: PreparedQuery,
  schema: ExecutionArgs['schema'],
  operationName: string | undefined,
): CompiledQuery | undefined {
  if (query.resolvesReferences || query.shaped) return undefined;
  let compilation = compilations.get(query);
  if (!compilation) compilations.set(query, (compilation = { runs: 0, compiled: new Map() }));
  if (++compilation.runs < COMPILE_AT) return undefined;
  const key = operationName ?? '';
  let compiled = compilation.compiled.get(key);
  if (compiled === undefined) {
    compiled = isPlainQuery(query, operationName) && compile(query, schema, operationName);
    compilation.compiled.set(key, compiled);
  }
  return compiled || undefined;
}

function isPlainQuery(query: PreparedQuery, operationName: string | undefined): boolean {
  return getOperationAST(query.executable, operationName)?.operation === 'query';
}

function compile(
  query: PreparedQuery,
  schema: ExecutionArgs['schema'],
  operationName: string | undefined,
): CompiledQuery | false {
  const result = compileQuery(schema, query.executable, operationName);
  return isCompiledQuery(result) ? result : false;
}

/** Runs a compiled query as graphql-js's `execute` would run it. */
export async function executeCompiled(
  compiled: CompiledQuery,
  args: Pick<ExecutionArgs, 'rootValue' | 'contextValue' | 'variableValues'>,
): Promise<ExecutionResult> {
  return compiled.query(args.rootValue, args.contextValue, args.variableValues ?? {});
}
