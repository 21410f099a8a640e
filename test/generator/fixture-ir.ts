/**
 * The IR of the fixture spec (test/fixtures/spec, described in its README), built once, and
 * lookups by name for table-driven tests.
 */
import { buildIR } from '../../generator/ir/build-ir.js';
import type {
  ComplexTypeIR,
  ElementIR,
  ResourceIR,
  SearchArgumentIR,
  SearchParameterIR,
} from '../../generator/ir/ir-types.js';
import { loadSpec } from '../../generator/load/load-spec.js';
import { FIXTURE_SPEC } from './spec-builders.js';

/** A row of a table-driven test. */
export type Row<Given, Want> = [name: string, row: { given: Given; want: Want }];

export const ir = buildIR(loadSpec(FIXTURE_SPEC));

/** Datatypes, resources and backbones. */
export const allTypes: readonly ComplexTypeIR[] = [
  ...ir.datatypes,
  ...ir.resources.flatMap((r) => [r, ...r.backbones]),
];

export function typeNamed(name: string): ComplexTypeIR {
  const type = allTypes.find((t) => t.name === name);
  if (!type) throw new Error(`The fixture IR has no type ${name}`);
  return type;
}

export function resourceIn(resources: readonly ResourceIR[], name: string): ResourceIR {
  const found = resources.find((r) => r.name === name);
  if (!found) throw new Error(`No resource ${name}`);
  return found;
}

export function resource(name: string): ResourceIR {
  return resourceIn(ir.resources, name);
}

/** `Patient.deceasedBoolean`: an element by its type's name and its own (expanded) name. */
export function element(ref: string): ElementIR {
  const [typeName, name] = ref.split('.');
  const found = typeNamed(typeName).elements.find((e) => e.name === name);
  if (!found) throw new Error(`${typeName} has no element ${name}`);
  return found;
}

/** `Patient.death-date`: a search parameter by resource and code. */
export function parameter(ref: string): SearchParameterIR | undefined {
  const [type, code] = ref.split('.');
  return resource(type).searchParameters.find((p) => p.code === code);
}

/** `Patient.name_exact`: a search argument by resource and argument name. */
export function argument(ref: string): SearchArgumentIR | undefined {
  const [type, name] = ref.split('.');
  return resource(type).searchArguments.find((a) => a.name === name);
}

export function names(items: readonly { name: string }[]): string[] {
  return items.map((item) => item.name);
}
