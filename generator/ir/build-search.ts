/**
 * Search parameters per resource type, the GraphQL argument names they are offered under, and
 * the reverse references they create (`Patient.ConditionList(_reference: patient)`).
 * @see http://hl7.org/fhir/R4/search.html
 * @see http://hl7.org/fhir/R4/graphql.html#searching
 */
import type { SearchType } from '../../runtime/model/search-definition.js';
import type { SearchParameter } from '../load/spec-types.js';
import type { ReferenceTargetIR, SearchArgumentIR, SearchParameterIR } from './ir-types.js';
import { sortedBy, toArgumentName } from './naming.js';
import { expressionForBase } from './search-expression.js';

const SEARCH_TYPES: readonly SearchType[] = [
  'composite',
  'date',
  'number',
  'quantity',
  'reference',
  'special',
  'string',
  'token',
  'uri',
];

/** How HL7 starts the description of a parameter shared by several resource types. */
const SHARED_DESCRIPTION = 'Multiple Resources:';

/**
 * Modifiers offered as argument suffixes (`name_exact`), by search type: the R4 modifiers whose
 * meaning needs no terminology server. GraphQL names cannot spell `name:exact`.
 * @see http://hl7.org/fhir/R4/search.html#modifiers
 */
export const MODIFIERS: Readonly<Record<SearchType, readonly string[]>> = {
  composite: [],
  date: ['missing'],
  number: ['missing'],
  quantity: ['missing'],
  reference: ['missing'],
  special: [],
  string: ['contains', 'exact', 'missing'],
  token: ['missing', 'not', 'text'],
  uri: ['above', 'below', 'missing'],
};

/** Every resource type is a Resource, so Resource's parameters (`_id`) apply to all of them. */
const ROOT_BASE = 'Resource';

/** A resource type and the types it derives from, nearest first: `Patient`, `[DomainResource, Resource]`. */
export interface ResourceLineage {
  readonly name: string;
  readonly ancestors: readonly string[];
}

export interface ResourceSearch {
  readonly searchParameters: readonly SearchParameterIR[];
  readonly searchArguments: readonly SearchArgumentIR[];
  readonly referenceTargets: readonly ReferenceTargetIR[];
  /** spec/ files holding these parameters. */
  readonly sources: readonly string[];
}

/**
 * A parameter applies to each base it names and to the resource types deriving from that base:
 * DomainResource's `_text` to Patient but not to Bundle, Binary or Parameters, which derive from
 * Resource directly.
 */
export function buildSearch(
  parameters: readonly SearchParameter[],
  resourceTypes: readonly ResourceLineage[],
  files: ReadonlyMap<object, string>,
): { forResource(type: string): ResourceSearch } {
  const known = new Set(resourceTypes.map((t) => t.name));
  const codesByUrl = new Map(parameters.map((p) => [p.url, p.code]));
  const byResource = new Map<string, Map<string, SearchParameterIR>>(
    resourceTypes.map((t) => [t.name, new Map()]),
  );
  const sources = new Map<string, Set<string>>(resourceTypes.map((t) => [t.name, new Set()]));
  const derivingFrom = (declaredOn: string) =>
    resourceTypes
      .filter(
        (t) =>
          declaredOn === ROOT_BASE || t.name === declaredOn || t.ancestors.includes(declaredOn),
      )
      .map((t) => t.name);

  for (const parameter of parameters) {
    for (const declaredOn of parameter.base) {
      const bases = derivingFrom(declaredOn);
      if (declaredOn !== ROOT_BASE && bases.length === 0) {
        throw new Error(`SearchParameter ${parameter.id} has the unknown base ${declaredOn}`);
      }
      for (const base of bases) {
        const own = byResource.get(base)!;
        if (own.has(parameter.code)) {
          throw new Error(`${base} has two search parameters with the code ${parameter.code}`);
        }
        own.set(parameter.code, buildParameter(parameter, base, declaredOn, known, codesByUrl));
        sources.get(base)!.add(files.get(parameter)!);
      }
    }
  }

  return {
    forResource(type) {
      const searchParameters = sortedBy(byResource.get(type)!.values(), (p) => p.code);
      return {
        searchParameters,
        searchArguments: buildArguments(type, searchParameters),
        referenceTargets: referenceTargets(searchParameters, known.size),
        sources: sortedBy(sources.get(type)!, (s) => s),
      };
    },
  };
}

function buildParameter(
  parameter: SearchParameter,
  base: string,
  declaredOn: string,
  known: ReadonlySet<string>,
  codesByUrl: ReadonlyMap<string, string>,
): SearchParameterIR {
  const type = parameter.type as SearchType;
  if (!SEARCH_TYPES.includes(type)) {
    throw new Error(`SearchParameter ${parameter.id} has the unknown type ${parameter.type}`);
  }
  const targets = (parameter.target ?? []).includes('Resource')
    ? [...known]
    : (parameter.target ?? []).filter((t) => known.has(t));
  return {
    code: parameter.code,
    argument: toArgumentName(parameter.code),
    type,
    expression: parameter.expression
      ? expressionForBase(parameter.expression, base, declaredOn)
      : '',
    targets: sortedBy(new Set(targets), (t) => t),
    modifiers: MODIFIERS[type],
    components: (parameter.component ?? []).map((component) => {
      const code = codesByUrl.get(component.definition);
      if (!code)
        throw new Error(
          `SearchParameter ${parameter.id}: unknown component ${component.definition}`,
        );
      return { code, expression: component.expression };
    }),
    description: descriptionForBase(parameter.description ?? '', base),
  };
}

/**
 * HL7 describes a parameter shared by several resource types in one text, a line per base:
 * `Multiple Resources: \r\n\r\n* [Patient](patient.html): The patient's date of birth\r\n* [Person]…`.
 * Each base keeps its own line's text; a description without a line for the base is kept whole.
 */
function descriptionForBase(description: string, base: string): string {
  if (!description.startsWith(SHARED_DESCRIPTION)) return description;
  const own = description
    .split(/\r?\n/)
    .map((line) => /^\* \[(\w+)\]\([^)]*\):(.*)$/.exec(line))
    .find((match) => match?.[1] === base);
  return own?.[2].trim() || description;
}

/**
 * Each parameter's own argument, then one argument per modifier. A modifier argument that would
 * shadow a real parameter's argument (a parameter coded `x-text` beside a token `x`) is not offered:
 * the real parameter wins. Two parameters whose codes spell one argument (`a-b` and `a_b`) are an
 * error, as one of them could not be searched.
 */
function buildArguments(
  type: string,
  parameters: readonly SearchParameterIR[],
): SearchArgumentIR[] {
  const args = new Map<string, SearchArgumentIR>();
  for (const { argument, code } of parameters) {
    const taken = args.get(argument);
    if (taken) {
      throw new Error(
        `${type}: search parameters ${taken.code} and ${code} would both be the GraphQL argument ${argument}; change one of the codes`,
      );
    }
    args.set(argument, { name: argument, code });
  }
  for (const parameter of parameters) {
    for (const modifier of parameter.modifiers) {
      const name = `${parameter.argument}_${modifier}`;
      const existing = args.get(name);
      // Unreachable while no modifier contains `_`; kept so that adding one cannot drop an argument.
      if (existing?.modifier) {
        throw new Error(
          `${type}: argument ${name} would mean both ${existing.code}:${existing.modifier} and ${parameter.code}:${modifier}`,
        );
      }
      if (!existing) args.set(name, { name, code: parameter.code, modifier });
    }
  }
  return sortedBy(args.values(), (a) => a.name);
}

/**
 * The types the reference parameters can point to, each with the codes of those that can (sorted,
 * as `parameters` is). A parameter that may point to any resource (Provenance's `target`,
 * AuditEvent's `entity`: most of R4's reference parameters by the pairs they make) is left out:
 * typed reverse fields for it on every resource type were four fifths of the schema. Its reverse
 * references are still written as FHIR writes them and run through the generic reverse fields
 * (fhir-dialect.ts).
 */
function referenceTargets(
  parameters: readonly SearchParameterIR[],
  resourceTypes: number,
): ReferenceTargetIR[] {
  const byTarget = new Map<string, string[]>();
  for (const { type, code, targets } of parameters) {
    if (type !== 'reference' || pointsToAnyResource(targets, resourceTypes)) continue;
    for (const target of targets) byTarget.set(target, [...(byTarget.get(target) ?? []), code]);
  }
  return sortedBy(
    [...byTarget].map(([target, codes]) => ({ target, parameters: codes })),
    (r) => r.target,
  );
}

/**
 * R4 lists 145 types where a parameter may point to any resource; its specific parameters name at
 * most ten.
 */
const ANY_RESOURCE_TARGETS = 100;

/** Whether a reference parameter may point to any resource: `Resource`, or (nearly) every type. */
function pointsToAnyResource(targets: readonly string[], resourceTypes: number): boolean {
  return targets.length === resourceTypes || targets.length >= ANY_RESOURCE_TARGETS;
}
