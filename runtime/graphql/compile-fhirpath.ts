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
 * clients (literals or variables), and each compiled one holds about 10 KB: unbounded, distinct
 * expressions would grow the heap without end.
 */
export const FHIRPATH_CACHE_CAPACITY = 500;
const compiled = new Map<string, FhirPathFunction>();

/** How many compiled expressions are kept (for tests). */
export function cachedFhirPaths(): number {
  return compiled.size;
}

export async function compileFhirPath(
  expression: string,
  base?: string,
): Promise<FhirPathFunction> {
  const key = `${base ?? ''}\u0000${expression}`;
  let evaluate = compiled.get(key);
  if (evaluate) {
    compiled.delete(key);
    compiled.set(key, evaluate);
  } else {
    const [{ default: fhirpath }, { default: r4Model }] = await Promise.all([
      import('fhirpath'),
      import('fhirpath/fhir-context/r4'),
    ]);
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
    compiled.set(key, evaluate);
    if (compiled.size > FHIRPATH_CACHE_CAPACITY) compiled.delete(compiled.keys().next().value!);
  }
  return evaluate;
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
