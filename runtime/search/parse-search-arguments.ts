/**
 * Search arguments (GraphQL `PatientList(name_exact: "Eve")`) → typed criteria, using a
 * resource's generated search definition. Several values for one argument mean AND; commas
 * inside one value mean OR.
 * @see http://hl7.org/fhir/R4/search.html#combining
 */
import type { ResourceSearchDefinition } from '../model/search-definition.js';
import { parseSearchValues, SearchValueError, type SearchValue } from './search-value.js';

/** `name:missing=true`: whether the element is absent, not a value of the parameter's type. */
export interface MissingCriterion {
  readonly code: string;
  readonly modifier: 'missing';
  readonly missing: boolean;
}

export interface ValueCriterion<V extends SearchValue = SearchValue> {
  readonly code: string;
  readonly modifier?: string;
  /** Alternatives: a match needs one of them. */
  readonly values: readonly V[];
}

export type SearchCriterion<V extends SearchValue = SearchValue> =
  MissingCriterion | ValueCriterion<V>;

/** A raw argument value: one string, or several (repeated parameter: all must match). */
export type RawSearchArgument = string | readonly string[];

/** Modifiers whose values are not written in the parameter's own type. @see http://hl7.org/fhir/R4/search.html#modifiers */
const MODIFIER_VALUE_TYPES = {
  text: 'string',
  contains: 'string',
  exact: 'string',
  above: 'uri',
  below: 'uri',
} as const;

/** Criteria in argument order; throws SearchValueError naming the first bad argument. */
export function parseSearchArguments(
  definition: ResourceSearchDefinition,
  args: Readonly<Record<string, RawSearchArgument>>,
): SearchCriterion[] {
  return Object.entries(args).flatMap(([argument, raw]) => {
    const mapped = definition.arguments[argument];
    if (!mapped) {
      throw new SearchValueError(
        argument,
        `${argument}: unknown search parameter for ${definition.resourceType}`,
      );
    }
    const [code, modifier] = mapped;
    const values = typeof raw === 'string' ? [raw] : raw;
    return values.map((value) => parseCriterion(definition, code, modifier, value, argument));
  });
}

/** One criterion: `code` with an optional modifier and its raw value. Shared with the REST API. */
export function parseCriterion(
  definition: ResourceSearchDefinition,
  code: string,
  modifier: string | undefined,
  raw: string,
  argument: string,
): SearchCriterion {
  const parameter = definition.parameters[code];
  if (!parameter)
    throw new SearchValueError(
      argument,
      `${argument}: unknown search parameter for ${definition.resourceType}`,
    );
  if (modifier !== undefined && !parameter.modifiers.includes(modifier)) {
    const offered = parameter.modifiers.length ? parameter.modifiers.join(', ') : 'none';
    throw new SearchValueError(
      argument,
      `${argument}: the modifier :${modifier} does not apply to ${code} (offered: ${offered})`,
    );
  }
  if (modifier === 'missing') {
    if (raw !== 'true' && raw !== 'false') {
      throw new SearchValueError(
        argument,
        `${argument}: "${raw}" is not valid for :missing (expected true or false)`,
      );
    }
    return { code, modifier, missing: raw === 'true' };
  }
  const type =
    (modifier && MODIFIER_VALUE_TYPES[modifier as keyof typeof MODIFIER_VALUE_TYPES]) ||
    parameter.type;
  const values = parseSearchValues(type, raw, argument);
  return modifier === undefined ? { code, values } : { code, modifier, values };
}
