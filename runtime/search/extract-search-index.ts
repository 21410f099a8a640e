/**
 * Extracts, at write time, the values search matches against: one row per value of each string,
 * token, reference, date, number, quantity and uri parameter (search-index.ts). Composite and
 * special parameters, and `_id` and `_lastUpdated` (columns of the resource row), are answered
 * elsewhere.
 *
 * Each parameter's FHIRPath expression is compiled once: plain paths walk the JSON directly
 * (extract-path-plan.ts), the rest runs on fhirpath.js (extract-fhirpath.ts). The FHIR type of
 * each value decides how it is indexed (extract-text-rows.ts, extract-value-rows.ts).
 *
 * @see http://hl7.org/fhir/R4/search.html
 */
import { compileFhirPath } from './extract-fhirpath.js';
import { compilePathPlan, type Evaluator } from './extract-path-plan.js';
import { addStringRows, addTokenRows, addUriRows } from './extract-text-rows.js';
import {
  addDateRows,
  addNumberRows,
  addQuantityRows,
  addReferenceRows,
} from './extract-value-rows.js';
import {
  RESOURCE_COLUMN_PARAMETERS,
  type ResourceSearchDefinition,
} from '../model/search-definition.js';
import type { SearchIndexRows } from './search-index.js';

type IndexedType = keyof SearchIndexRows;
type RowOf<K extends IndexedType> = SearchIndexRows[K][number];
type RowBuilder<K extends IndexedType> = (
  code: string,
  value: unknown,
  type: string,
  out: RowOf<K>[],
) => void;

const rowBuilders: { readonly [K in IndexedType]: RowBuilder<K> } = {
  string: addStringRows,
  token: addTokenRows,
  reference: addReferenceRows,
  date: addDateRows,
  number: addNumberRows,
  quantity: addQuantityRows,
  uri: addUriRows,
};

interface CompiledParameter {
  readonly code: string;
  readonly type: IndexedType;
  readonly evaluate: Evaluator;
}

/** By resource type and expression: each compiles once, whichever definition object holds it. */
const evaluators = new Map<string, Evaluator>();
const compiledDefinitions = new WeakMap<ResourceSearchDefinition, CompiledParameter[]>();

export function extractSearchIndex(
  resource: Record<string, unknown> & { resourceType: string },
  definition: ResourceSearchDefinition,
): SearchIndexRows {
  const rows: SearchIndexRows = {
    string: [],
    token: [],
    reference: [],
    date: [],
    number: [],
    quantity: [],
    uri: [],
  };
  // The definition's expressions start from its own type: another type's resource matches none.
  if (resource.resourceType !== definition.resourceType) return rows;
  for (const parameter of compileDefinition(definition)) {
    extractParameter(parameter.type, parameter, resource, rows[parameter.type]);
  }
  return rows;
}

/** Adds one parameter's rows, deduplicated; none when its expression fails on this resource. */
function extractParameter<K extends IndexedType>(
  type: K,
  parameter: CompiledParameter,
  resource: Record<string, unknown>,
  rows: RowOf<K>[],
): void {
  const build: RowBuilder<K> = rowBuilders[type];
  const found: RowOf<K>[] = [];
  try {
    parameter.evaluate(resource, (value, valueType) =>
      build(parameter.code, value, valueType, found),
    );
  } catch {
    return;
  }
  if (found.length === 1) rows.push(found[0]);
  else if (found.length > 1) rows.push(...deduplicate(found));
}

/** Rows are flat objects of primitives; few per parameter, so pairwise comparison is cheapest. */
function deduplicate<T extends object>(rows: T[]): T[] {
  if (rows.length > 32) {
    const seen = new Set<string>();
    return rows.filter((row) => {
      const key = JSON.stringify(row);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
  const unique: T[] = [];
  for (const row of rows) {
    if (!unique.some((kept) => sameRow(kept, row))) unique.push(row);
  }
  return unique;
}

function sameRow(a: object, b: object): boolean {
  for (const key in a) {
    if (a[key as keyof typeof a] !== b[key as keyof typeof b]) return false;
  }
  return true;
}

function compileDefinition(definition: ResourceSearchDefinition): CompiledParameter[] {
  let compiled = compiledDefinitions.get(definition);
  if (!compiled) {
    compiled = [];
    for (const { code, type, expression } of Object.values(definition.parameters)) {
      if (!(type in rowBuilders) || !expression || RESOURCE_COLUMN_PARAMETERS.has(code)) continue;
      const evaluate = compileExpression(expression, definition.resourceType);
      if (evaluate) compiled.push({ code, type: type as IndexedType, evaluate });
    }
    compiledDefinitions.set(definition, compiled);
  }
  return compiled;
}

/** undefined when fhirpath.js cannot compile the expression: the parameter then never has rows. */
function compileExpression(expression: string, resourceType: string): Evaluator | undefined {
  const key = `${resourceType} ${expression}`;
  let evaluate = evaluators.get(key);
  if (!evaluate) {
    try {
      evaluate = compilePathPlan(expression, resourceType) ?? compileFhirPath(expression);
    } catch {
      return undefined;
    }
    evaluators.set(key, evaluate);
  }
  return evaluate;
}
