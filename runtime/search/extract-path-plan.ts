/**
 * The fast path of search extraction: expressions made only of plain paths walk the JSON
 * directly, typing each value from the element definitions instead of running FHIRPath.
 *
 * Accepted (extract-path-syntax.ts): `Type.a.b.c`, names optionally followed by `.ofType(T)`
 * and `.where(name='literal')`, the whole by `.where(resolve() is T)`; parentheses around
 * paths; terms joined by `|`. Anything else, or a path the element definitions
 * cannot type, makes compilePathPlan return undefined and goes to fhirpath.js.
 */
import r4Model from 'fhirpath/fhir-context/r4';
import { loadDefinitionRegistry } from '../../generated/definitions/index.js';
import type { ElementDefinition, TypeDefinition } from '../model/type-definition.js';
import { isObject, referenceTargetType } from './extract-reference.js';
import { parsePathUnion, type Segment } from './extract-path-syntax.js';

/** Receives each value an expression selects, with its FHIR type name (`HumanName`, `date`). */
export type Emit = (value: unknown, type: string) => void;
export type Evaluator = (resource: Record<string, unknown>, emit: Emit) => void;

interface Filter {
  readonly prop: string;
  readonly literal: string;
}

interface Step {
  readonly prop: string;
  /** From `.where(prop='literal')`: keep only objects whose prop is the literal. */
  readonly filter?: Filter;
}

interface Leaf {
  readonly prop: string;
  readonly type: string;
}

interface PathTerm {
  /** JSON properties to walk from the resource, each step flattening arrays. */
  readonly steps: readonly Step[];
  /** The last step; several properties for a choice element (`value` → `valueQuantity`, …). */
  readonly leaves: readonly Leaf[];
  readonly leafFilter?: Filter;
  /** From `.where(resolve() is T)`: keep only references to T. */
  readonly referenceType?: string;
}

/** A name of the path with the `.ofType(T)` and `.where(prop='literal')` that follow it. */
interface NameSegment {
  readonly name: string;
  ofType?: string;
  filter?: Filter;
}

interface TermSyntax {
  readonly names: NameSegment[];
  referenceType?: string;
}

/** An evaluator walking the JSON, or undefined when the expression needs FHIRPath. */
export function compilePathPlan(expression: string, resourceType: string): Evaluator | undefined {
  const terms: PathTerm[] = [];
  for (const segments of parsePathUnion(expression) ?? []) {
    const syntax = termSyntax(segments, resourceType);
    const term = syntax && compileTerm(syntax, resourceType);
    if (!term) return undefined;
    terms.push(term);
  }
  if (terms.length === 0) return undefined;
  if (terms.length === 1) {
    const [term] = terms;
    return (resource, emit) => walk(resource, term, 0, resource, emit);
  }
  return (resource, emit) => {
    for (const term of terms) walk(resource, term, 0, resource, emit);
  };
}

/** Names, each with at most one ofType then one filter, then at most one resolve() check. */
function termSyntax(segments: readonly Segment[], resourceType: string): TermSyntax | undefined {
  // `Type.name` or, as FHIRPath allows, a bare `name` relative to the resource.
  const [root] = segments;
  const rest = root?.kind === 'name' && root.name === resourceType ? segments.slice(1) : segments;
  const syntax: TermSyntax = { names: [] };
  for (const segment of rest) {
    const last = syntax.names[syntax.names.length - 1];
    if (syntax.referenceType !== undefined) return undefined;
    if (segment.kind === 'name') syntax.names.push({ name: segment.name });
    else if (segment.kind === 'ofType' && last && !last.ofType && !last.filter) {
      last.ofType = segment.type;
    } else if (segment.kind === 'whereEquals' && last && !last.filter) {
      last.filter = { prop: segment.name, literal: segment.literal };
    } else if (segment.kind === 'whereResolveIs' && last) {
      syntax.referenceType = segment.type;
    } else return undefined;
  }
  return syntax.names.length > 0 ? syntax : undefined;
}

function compileTerm(syntax: TermSyntax, resourceType: string): PathTerm | undefined {
  let type = typeDefinition(resourceType);
  const steps: Step[] = [];
  for (const { name, ofType, filter } of syntax.names.slice(0, -1)) {
    const candidates = type ? elementsOfType(elementsNamed(type, name), ofType) : [];
    // A choice or a resource in the middle of a path is left to FHIRPath.
    if (candidates.length !== 1 || candidates[0].kind === 'resource') return undefined;
    type = typeDefinition(candidates[0].type);
    if (filter && !(type && canFilter(type, filter))) return undefined;
    steps.push({ prop: candidates[0].name, filter });
  }
  const { name, ofType, filter } = syntax.names[syntax.names.length - 1];
  const last = type ? elementsNamed(type, name) : [];
  if (last.length === 0) return undefined;
  const leaves = elementsOfType(last, ofType).map(({ name, type }) => ({ prop: name, type }));
  if (filter && !leaves.every((leaf) => canFilter(typeDefinition(leaf.type), filter))) {
    return undefined;
  }
  return { steps, leaves, leafFilter: filter, referenceType: syntax.referenceType };
}

/** `ofType(T)` keeps elements of type T or a specialization of it (`canonical` is a `uri`). */
function elementsOfType(elements: ElementDefinition[], ofType: string | undefined) {
  return ofType === undefined ? elements : elements.filter((element) => isA(element.type, ofType));
}

function isA(type: string, wanted: string): boolean {
  for (let t: string | undefined = type; t; t = r4Model.type2Parent[t]) {
    if (t === wanted) return true;
  }
  return false;
}

/** `.where(prop='literal')` compares a single string-valued primitive, nothing else. */
function canFilter(type: TypeDefinition | undefined, filter: Filter): boolean {
  const elements = type ? elementsNamed(type, filter.prop) : [];
  if (elements.length !== 1) return false;
  const [element] = elements;
  const primitive = loadDefinitionRegistry().primitives[element.type];
  return !element.array && element.kind === 'primitive' && primitive?.jsonType === 'string';
}

function passes(filter: Filter | undefined, value: Record<string, unknown>): boolean {
  return filter === undefined || value[filter.prop] === filter.literal;
}

function walk(
  node: Record<string, unknown>,
  term: PathTerm,
  step: number,
  resource: Record<string, unknown>,
  emit: Emit,
): void {
  if (step === term.steps.length) {
    for (const leaf of term.leaves) emitLeaf(node[leaf.prop], leaf.type, term, resource, emit);
    return;
  }
  const { prop, filter } = term.steps[step];
  const value = node[prop];
  if (Array.isArray(value)) {
    for (const item of value) {
      if (isObject(item) && passes(filter, item)) walk(item, term, step + 1, resource, emit);
    }
  } else if (isObject(value) && passes(filter, value)) {
    walk(value, term, step + 1, resource, emit);
  }
}

function emitLeaf(
  value: unknown,
  type: string,
  term: PathTerm,
  resource: Record<string, unknown>,
  emit: Emit,
): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) emitLeaf(item, type, term, resource, emit);
  } else if (
    (term.leafFilter === undefined || (isObject(value) && passes(term.leafFilter, value))) &&
    (term.referenceType === undefined ||
      referenceTargetType(value, resource) === term.referenceType)
  ) {
    emit(value, type);
  }
}

/**
 * The FHIR type of the element a FHIRPath node path names (`Bot.identifier`, `Identifier.type`),
 * for nodes fhirpath.js could not type because its model lacks the resource (Graphir's Bot).
 * `propName` is the JSON property, which tells the member of a choice element.
 */
export function elementTypeAtPath(path: string, propName?: string): string | undefined {
  const [root, ...names] = path.split('.');
  let type = typeDefinition(root);
  let found: ElementDefinition | undefined;
  for (const [index, name] of names.entries()) {
    if (!type) return undefined;
    const candidates = elementsNamed(type, name);
    const isLast = index === names.length - 1;
    found =
      candidates.length === 1
        ? candidates[0]
        : candidates.find((element) => isLast && element.name === propName);
    if (!found) return undefined;
    type = typeDefinition(found.type);
  }
  return found?.type;
}

function typeDefinition(name: string): TypeDefinition | undefined {
  return loadDefinitionRegistry().types[name];
}

/** The element with this JSON name, or the members of the choice element with this name. */
function elementsNamed(type: TypeDefinition, name: string): ElementDefinition[] {
  const exact = type.elements.filter((element) => element.name === name && !element.choiceGroup);
  return exact.length > 0 ? exact : type.elements.filter((element) => element.choiceGroup === name);
}
