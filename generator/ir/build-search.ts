/**
 * Search parameters per resource type, the GraphQL argument names they are offered under, and
 * the reverse references they create (`Patient.ConditionList(_reference: patient)`).
 * @see http://hl7.org/fhir/R4/search.html
 * @see http://hl7.org/fhir/R4/graphql.html#searching
 */
import type { SearchType } from '../../runtime/search/search-value.js';
import type { SearchParameter } from '../load/spec-types.js';
import type { ReverseReferenceIR, SearchArgumentIR, SearchParameterIR } from './ir-types.js';
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

/** Parameters on these bases apply to every resource type. */
const UNIVERSAL_BASES = new Set(['Resource', 'DomainResource']);

export interface ResourceSearch {
  readonly searchParameters: readonly SearchParameterIR[];
  readonly searchArguments: readonly SearchArgumentIR[];
  readonly reverseReferences: readonly ReverseReferenceIR[];
  /** spec/ files holding these parameters. */
  readonly sources: readonly string[];
}

export function buildSearch(
  parameters: readonly SearchParameter[],
  resourceTypes: readonly string[],
  files: ReadonlyMap<object, string>,
): { forResource(type: string): ResourceSearch } {
  const known = new Set(resourceTypes);
  const codesByUrl = new Map(parameters.map((p) => [p.url, p.code]));
  const byResource = new Map<string, Map<string, SearchParameterIR>>(resourceTypes.map((t) => [t, new Map()]));
  const sources = new Map<string, Set<string>>(resourceTypes.map((t) => [t, new Set()]));

  for (const parameter of parameters) {
    for (const declaredOn of parameter.base) {
      const bases = UNIVERSAL_BASES.has(declaredOn) ? resourceTypes : [declaredOn];
      if (!UNIVERSAL_BASES.has(declaredOn) && !known.has(declaredOn)) {
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

  const reverse = buildReverseReferences(byResource, known);
  return {
    forResource(type) {
      const searchParameters = sortedBy(byResource.get(type)!.values(), (p) => p.code);
      return {
        searchParameters,
        searchArguments: buildArguments(type, searchParameters),
        reverseReferences: reverse.get(type) ?? [],
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
    expression: parameter.expression ? expressionForBase(parameter.expression, base, declaredOn) : '',
    targets: sortedBy(new Set(targets), (t) => t),
    modifiers: MODIFIERS[type],
    components: (parameter.component ?? []).map((component) => {
      const code = codesByUrl.get(component.definition);
      if (!code) throw new Error(`SearchParameter ${parameter.id}: unknown component ${component.definition}`);
      return { code, expression: component.expression };
    }),
    description: parameter.description ?? '',
  };
}

/**
 * Each parameter's own argument, then one argument per modifier. A modifier argument that would
 * shadow a real parameter's argument (a parameter coded `x-text` beside a token `x`) is not offered:
 * the real parameter wins.
 */
function buildArguments(type: string, parameters: readonly SearchParameterIR[]): SearchArgumentIR[] {
  const args = new Map<string, SearchArgumentIR>(parameters.map((p) => [p.argument, { name: p.argument, code: p.code }]));
  for (const parameter of parameters) {
    for (const modifier of parameter.modifiers) {
      const name = `${parameter.argument}_${modifier}`;
      const existing = args.get(name);
      if (existing?.modifier) {
        throw new Error(`${type}: argument ${name} would mean both ${existing.code}:${existing.modifier} and ${parameter.code}:${modifier}`);
      }
      if (!existing) args.set(name, { name, code: parameter.code, modifier });
    }
  }
  return sortedBy(args.values(), (a) => a.name);
}

function buildReverseReferences(
  byResource: ReadonlyMap<string, ReadonlyMap<string, SearchParameterIR>>,
  known: ReadonlySet<string>,
): Map<string, ReverseReferenceIR[]> {
  const pointing = new Map<string, Map<string, string[]>>();
  for (const [source, parameters] of byResource) {
    for (const parameter of parameters.values()) {
      if (parameter.type !== 'reference') continue;
      for (const target of parameter.targets.filter((t) => known.has(t))) {
        const sources = pointing.get(target) ?? new Map<string, string[]>();
        sources.set(source, [...(sources.get(source) ?? []), parameter.code]);
        pointing.set(target, sources);
      }
    }
  }
  const reverse = new Map<string, ReverseReferenceIR[]>();
  for (const [target, sources] of pointing) {
    const references = [...sources].map(([source, codes]) => ({ source, parameters: sortedBy(codes, (c) => c) }));
    reverse.set(target, sortedBy(references, (r) => r.source));
  }
  return reverse;
}
