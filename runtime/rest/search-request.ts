/**
 * A REST search's query string → criteria and result parameters. Every parameter is either
 * understood or refused with 400 naming it: none is ignored.
 * @see http://hl7.org/fhir/R4/search.html
 */
import { loadSearchDefinition, searchableTypes } from '../../generated/search/index.js';
import { fhirError } from '../model/fhir-error.js';
import { parseCriterion, type SearchCriterion } from '../search/parse-search-arguments.js';
import type {
  ResourceSearchDefinition,
  SearchParameterDefinition,
} from '../model/search-definition.js';
import type { IncludeRequest, SearchQuery, SortKey } from '../store/search-query.js';

/** The store's query, and what the REST answer does with the results (`_elements`). */
export interface SearchRequestParameters extends SearchQuery {
  readonly elements?: readonly string[];
}

export interface SearchLimits {
  readonly defaultCount: number;
  readonly maxCount: number;
}

/** Types of parameter the store cannot search yet: answered with 400 rather than ignored. */
const UNSUPPORTED_TYPES = new Set(['composite', 'special']);
/** Resource-level parameters without an expression (full text, named queries). */
const UNSUPPORTED_CODES = new Set([
  '_text',
  '_content',
  '_query',
  '_filter',
  '_has',
  '_list',
  '_type',
]);

/** Whether the store can search (and sort) by this parameter. */
export function isSupportedParameter(parameter: SearchParameterDefinition): boolean {
  return !UNSUPPORTED_TYPES.has(parameter.type) && !UNSUPPORTED_CODES.has(parameter.code);
}

export function parseSearchRequest(
  resourceType: string,
  query: URLSearchParams,
  limits: SearchLimits,
): SearchRequestParameters {
  const definition = loadSearchDefinition(resourceType);
  const criteria: SearchCriterion[] = [];
  const result = {
    count: limits.defaultCount,
    offset: 0,
    sort: [] as SortKey[],
    total: 'accurate' as SearchRequestParameters['total'],
    summaryCount: false,
    elements: undefined as string[] | undefined,
    include: [] as IncludeRequest[],
    revinclude: [] as IncludeRequest[],
  };
  for (const [name, value] of query) {
    switch (name) {
      case '_count':
        result.count = Math.min(nonNegativeInteger(name, value), limits.maxCount);
        break;
      case '_offset':
        result.offset = nonNegativeInteger(name, value);
        break;
      case '_sort':
        result.sort = parseSort(definition, value);
        break;
      case '_total':
        if (!['none', 'estimate', 'accurate'].includes(value))
          throw invalid(name, `"${value}" (expected none, estimate or accurate)`);
        result.total = value as SearchRequestParameters['total'];
        break;
      case '_summary':
        if (value !== 'count' && value !== 'false')
          throw fhirError(
            400,
            'not-supported',
            `_summary=${value} is not supported (count and false are)`,
            '_summary',
          );
        result.summaryCount = value === 'count';
        break;
      case '_elements':
        result.elements = value
          .split(',')
          .map((e) => e.trim())
          .filter(Boolean);
        break;
      case '_include':
        result.include.push(parseInclude(name, value, (type) => type === resourceType));
        break;
      case '_revinclude':
        result.revinclude.push(parseInclude(name, value, () => true));
        break;
      case '_format':
        if (!['json', 'application/json', 'application/fhir+json'].includes(value)) {
          throw fhirError(
            400,
            'not-supported',
            `_format=${value} is not supported: this server speaks FHIR JSON`,
            '_format',
          );
        }
        break;
      case '_pretty':
        break;
      default:
        criteria.push(parseParameter(definition, name, value));
    }
  }
  return { criteria, ...result };
}

/** `name:exact=…`, `subject:Patient=123` (the type modifier), `birthdate:missing=true`. */
function parseParameter(
  definition: ResourceSearchDefinition,
  name: string,
  value: string,
): SearchCriterion {
  const [code, modifier] = name.split(':', 2) as [string, string | undefined];
  const parameter = definition.parameters[code];
  if (!parameter || UNSUPPORTED_CODES.has(code)) {
    const reason = parameter
      ? 'is not supported by this server'
      : `is not a search parameter of ${definition.resourceType}`;
    throw fhirError(400, parameter ? 'not-supported' : 'invalid', `${name} ${reason}`, name);
  }
  if (UNSUPPORTED_TYPES.has(parameter.type)) {
    throw fhirError(
      400,
      'not-supported',
      `${name}: ${parameter.type} search parameters are not supported yet`,
      name,
    );
  }
  if (parameter.type === 'reference' && modifier && searchableTypes.has(modifier)) {
    const typed = value
      .split(',')
      .map((v) => (v.includes('/') ? v : `${modifier}/${v}`))
      .join(',');
    return parseCriterion(definition, code, undefined, typed, name);
  }
  return parseCriterion(definition, code, modifier, value, name);
}

/** `-date,name` → sort keys; `toCode` maps a key as written to a parameter code (GraphQL writes `address_city`). */
export function parseSort(
  definition: ResourceSearchDefinition,
  value: string,
  toCode: (key: string) => string = (key) => key,
): SortKey[] {
  return value.split(',').map((raw) => {
    const descending = raw.startsWith('-');
    const code = toCode(descending ? raw.slice(1) : raw);
    const parameter = definition.parameters[code];
    if (!parameter || !isSupportedParameter(parameter)) {
      throw invalid(
        '_sort',
        `"${code}" is not a sortable search parameter of ${definition.resourceType}`,
      );
    }
    return { code, descending };
  });
}

/** `Type:code[:targetType]`, e.g. `Observation:subject:Patient`. */
function parseInclude(
  name: string,
  value: string,
  sourceAllowed: (type: string) => boolean,
): IncludeRequest {
  const [sourceType, code, targetType] = value.split(':');
  if (!sourceType || !code || !searchableTypes.has(sourceType) || !sourceAllowed(sourceType)) {
    throw invalid(name, `"${value}" (expected Type:parameter[:TargetType])`);
  }
  const parameter = loadSearchDefinition(sourceType).parameters[code];
  if (parameter?.type !== 'reference')
    throw invalid(name, `"${code}" is not a reference parameter of ${sourceType}`);
  if (targetType !== undefined && !searchableTypes.has(targetType))
    throw invalid(name, `"${targetType}" is not a resource type`);
  return { sourceType, code, ...(targetType ? { targetType } : {}) };
}

function nonNegativeInteger(name: string, value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw invalid(name, `"${value}" (expected a whole number ≥ 0)`);
  return Number(value);
}

function invalid(name: string, what: string) {
  return fhirError(400, 'invalid', `${name}: ${what}`, name);
}
