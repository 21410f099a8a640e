/**
 * FHIRPath for GraphQL arguments and directives (`name(fhirpath: "family.exists()")`,
 * `@slice(path: "use")`), compiled once per expression and base.
 *
 * The engine loads on first use: it is large, and most queries never need it. A base path
 * (`Patient.name`, `Extension`) tells fhirpath.js which FHIR type the plain JSON item has, so
 * that choice elements resolve: `value.exists()` on an Extension is false without it.
 * @see http://hl7.org/fhir/R4/graphql.html#list
 */
import { GraphQLError } from 'graphql';
import { loadDefinitionRegistry } from '../../generated/definitions/index.js';

export type FhirPathFunction = (item: unknown) => unknown[];

/**
 * Compiled expressions kept, the least recently used dropped first. Expressions come from
 * clients (literals or variables), and each compiled one holds some kilobytes: unbounded,
 * distinct expressions would grow the heap without end. An expression being compiled is kept as
 * its promise, so that the items of one list, resolved side by side, compile it once.
 */
export const FHIRPATH_CACHE_CAPACITY = 500;
/** The longest expression accepted: evaluating one is synchronous and cannot be interrupted. */
export const MAX_FHIRPATH_CHARS = 1_000;
const compiled = new Map<string, Promise<FhirPathFunction>>();

/** How many compiled expressions are kept (for tests). */
export function cachedFhirPaths(): number {
  return compiled.size;
}

export function compileFhirPath(expression: string, base?: string): Promise<FhirPathFunction> {
  const key = `${base ?? ''}\u0000${expression}`;
  let evaluate = compiled.get(key);
  if (evaluate) {
    compiled.delete(key);
    compiled.set(key, evaluate);
    return evaluate;
  }
  evaluate = compile(expression, base);
  compiled.set(key, evaluate);
  if (compiled.size > FHIRPATH_CACHE_CAPACITY) compiled.delete(compiled.keys().next().value!);
  // A refused expression is not kept.
  evaluate.catch(() => {
    if (compiled.get(key) === evaluate) compiled.delete(key);
  });
  return evaluate;
}

async function compile(expression: string, base: string | undefined): Promise<FhirPathFunction> {
  if (expression.length > MAX_FHIRPATH_CHARS)
    throw new GraphQLError(
      `fhirpath: the expression is ${expression.length} characters long; the maximum is ${MAX_FHIRPATH_CHARS}`,
    );
  const [{ default: fhirpath }, { default: r4Model }] = await Promise.all([
    import('fhirpath'),
    import('fhirpath/fhir-context/r4'),
  ]);
  let evaluate: FhirPathFunction;
  try {
    evaluate = fhirpath.compile(
      base ? { base, expression } : expression,
      r4Model,
    ) as FhirPathFunction;
  } catch (error) {
    throw new GraphQLError(
      `fhirpath: "${expression}" is not a valid FHIRPath expression: ${(error as Error).message}`,
    );
  }
  // The engine's first evaluation sets itself up, which no query's budget should pay for.
  warmUp(evaluate);
  return evaluate;
}

let warm = false;
function warmUp(evaluate: FhirPathFunction): void {
  if (warm) return;
  warm = true;
  try {
    evaluate({});
  } catch {
    // What an expression makes of an empty item does not matter here.
  }
}

/**
 * The time one query may spend evaluating FHIRPath: each evaluation runs on the server's thread,
 * and a list of many items with a costly expression would hold every other request back. Past
 * the budget the field being resolved fails with an error, and so does every later one.
 */
export class FhirPathBudget {
  private spentMs = 0;

  constructor(private readonly budgetMs: number) {}

  evaluate(evaluate: FhirPathFunction, item: unknown): unknown[] {
    if (this.spentMs > this.budgetMs)
      throw new GraphQLError(
        `FHIRPath evaluation took more than this query's budget of ${this.budgetMs} ms`,
        { extensions: { code: 'QUERY_LIMIT' } },
      );
    const started = performance.now();
    try {
      return evaluate(item);
    } finally {
      this.spentMs += performance.now() - started;
    }
  }
}

/**
 * The FHIR path of a GraphQL type, or of one of its fields: `Patient.name` for `name` on
 * `Patient`, `Patient.contact` for `PatientContact`; undefined for types that are not FHIR's.
 */
export function fhirPathOf(graphqlType: string, fieldName?: string): string | undefined {
  const type = loadDefinitionRegistry().types[graphqlType];
  if (!type) return undefined;
  return fieldName ? `${type.path}.${fieldName}` : type.path;
}
