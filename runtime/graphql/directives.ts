/**
 * FHIR's result-shaping directives `@flatten`, `@first`, `@singleton` and `@slice(path:)`.
 * @see http://hl7.org/fhir/R4/graphql.html#directives
 *
 * They make keys such as `given.official`, which are not GraphQL response names, and merge values
 * across list items, which no GraphQL executor can express. So the schema declares them (validation
 * accepts them), graphql-js executes the query as if they were absent, and applyFhirDirectives
 * reshapes the data afterwards, as the reference engine writes its output
 * (org.hl7.fhir.r4.utils.GraphQLEngine.processValues):
 * - `@flatten`: the field's node is dropped and its children are written into the parent; when the
 *   field is a list, every child becomes a list, values appended across the items.
 * - `@first`: only the first item of the field's list is used.
 * - `@singleton`: a field that flattening would make a list is written as one value; a second
 *   value is an error.
 * - `@slice(path:)`: each item's children are written under `name.<key>`, where key is the FHIRPath
 *   `path` evaluated on the item (`$index`: its position).
 * Absent values (null) and empty lists are left out, as FHIR JSON does. Two decisions differ from
 * the reference engine: a slice suffix carries on into the children of a nested `@flatten` (the
 * engine drops it there, merging the slices), and selections with the same response name are
 * merged first, as GraphQL's CollectFields does (the engine writes each one).
 */
import {
  BREAK,
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getDirectiveValues,
  getNamedType,
  isObjectType,
  visit,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type OperationDefinitionNode,
  type SelectionNode,
} from 'graphql';
import { compileFhirPath, fhirPathOf, type FhirPathBudget } from './compile-fhirpath.js';

const SHAPING = new Set(['flatten', 'first', 'singleton', 'slice']);
const INDEX = '$index';
/** Response name of the hidden selection carrying an item's slice key (see sliceKeySelection). */
export const SLICE_KEY = '_graphirSliceKey';

export interface DirectiveInput {
  /** The query as the client wrote it. */
  readonly document: DocumentNode;
  readonly operationName?: string;
  readonly variables?: Readonly<Record<string, unknown>>;
}

/** Whether the query uses any of the shaping directives; only then is the result reshaped. */
export function hasFhirDirectives(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Directive(node) {
      if (!SHAPING.has(node.name.value)) return undefined;
      found = true;
      return BREAK;
    },
  });
  return found;
}

type Status = 'unspecified' | 'repeating' | 'singleton';
interface OutputField {
  status: Status;
  readonly values: unknown[];
}
/** An object being written: response names in order of first appearance. */
type Output = Map<string, OutputField>;

interface Walk {
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  readonly variables: Readonly<Record<string, unknown>>;
}

/** The executed `data` reshaped by the query's directives; a GraphQLError when it cannot be. */
export function applyFhirDirectives(
  data: Readonly<Record<string, unknown>>,
  { document, operationName, variables = {} }: DirectiveInput,
): Record<string, unknown> {
  const operation = document.definitions.find(
    (d): d is OperationDefinitionNode =>
      d.kind === Kind.OPERATION_DEFINITION && (!operationName || d.name?.value === operationName),
  );
  if (!operation) return { ...data };
  const fragments = new Map(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((f) => [f.name.value, f]),
  );
  const root: Output = new Map();
  writeObject(data, root, operation.selectionSet.selections, false, '', { fragments, variables });
  return toJson(root) as Record<string, unknown>;
}

function writeObject(
  source: Readonly<Record<string, unknown>>,
  target: Output,
  selections: readonly SelectionNode[],
  inheritedList: boolean,
  suffix: string,
  walk: Walk,
): void {
  for (const [key, nodes] of collectFields(selections, walk)) {
    const raw = source[key];
    const isList = Array.isArray(raw);
    const values = (isList ? raw : [raw]).filter((v) => v !== null && v !== undefined);
    if (values.length > 0)
      writeValues(key, nodes, values, isList, target, inheritedList, suffix, walk);
  }
}

/** One field's values, after GraphQLEngine.processValues. */
function writeValues(
  key: string,
  nodes: readonly FieldNode[],
  values: readonly unknown[],
  isList: boolean,
  target: Output,
  inheritedList: boolean,
  suffix: string,
  walk: Walk,
): void {
  const has = (name: string) => nodes.some((n) => n.directives?.some((d) => d.name.value === name));
  const [flatten, first, singleton] = [has('flatten'), has('first'), has('singleton')];
  const slicePath = sliceArgument(nodes);
  const selections = nodes.flatMap((n) => n.selectionSet?.selections ?? []);
  const leaf = nodes.every((n) => !n.selectionSet);
  const status = (list: boolean): Status =>
    singleton ? 'singleton' : list ? 'repeating' : 'unspecified';
  if (slicePath !== undefined && first)
    throw directiveError(`${key}: @slice and @first cannot be used together`, nodes);
  if (leaf && (flatten || slicePath !== undefined))
    throw directiveError(`${key}: @flatten and @slice apply to fields with a selection`, nodes);

  let field: OutputField | undefined;
  if (first && !flatten) field = addField(target, key + suffix, status(inheritedList), nodes);
  else if (!flatten && slicePath === undefined)
    field = addField(target, key + suffix, status(isList || inheritedList), nodes);
  const childList = flatten && isList && !first;
  for (const [index, value] of values.entries()) {
    // Children written into a node of their own start afresh; flattened ones keep the suffix.
    let childSuffix = flatten ? suffix : '';
    if (slicePath !== undefined) {
      childSuffix = `${suffix}.${sliceKey(value, slicePath, index)}`;
      if (!flatten) field = addField(target, key + suffix, status(isList || inheritedList), nodes);
    }
    if (leaf || typeof value !== 'object') {
      field!.values.push(value);
    } else if (field) {
      const child: Output = new Map();
      field.values.push(child);
      writeObject(
        value as Record<string, unknown>,
        child,
        selections,
        childList,
        childSuffix,
        walk,
      );
    } else {
      writeObject(
        value as Record<string, unknown>,
        target,
        selections,
        childList,
        childSuffix,
        walk,
      );
    }
    if (first) break;
  }
}

/** ObjectValue.addField: a name seen again becomes a list, unless @singleton forbids it. */
function addField(
  target: Output,
  name: string,
  status: Status,
  nodes: readonly FieldNode[],
): OutputField {
  const existing = target.get(name);
  if (!existing) {
    const field: OutputField = { status, values: [] };
    target.set(name, field);
    return field;
  }
  if (existing.status === 'singleton')
    throw directiveError(`@singleton: ${name} has more than one value`, nodes);
  existing.status = 'repeating';
  return existing;
}

function toJson(value: unknown): unknown {
  if (!(value instanceof Map)) return value;
  const result: Record<string, unknown> = {};
  for (const [name, field] of value as Output) {
    if (field.status === 'singleton' && field.values.length > 1)
      throw directiveError(`@singleton: ${name} has more than one value`, []);
    result[name] =
      field.status === 'repeating' || field.values.length > 1
        ? field.values.map(toJson)
        : toJson(field.values[0]);
  }
  return result;
}

/** Fields by response name, through fragments, as GraphQL's CollectFields does. */
function collectFields(
  selections: readonly SelectionNode[],
  walk: Walk,
  into = new Map<string, FieldNode[]>(),
  visited = new Set<string>(),
): Map<string, FieldNode[]> {
  for (const selection of selections) {
    if (!included(selection, walk.variables)) continue;
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value;
      into.set(key, [...(into.get(key) ?? []), selection]);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      collectFields(selection.selectionSet.selections, walk, into, visited);
    } else if (!visited.has(selection.name.value)) {
      visited.add(selection.name.value);
      const fragment = walk.fragments.get(selection.name.value);
      if (fragment) collectFields(fragment.selectionSet.selections, walk, into, visited);
    }
  }
  return into;
}

type Variables = Parameters<typeof getDirectiveValues>[2];

function included(node: SelectionNode, variables: Readonly<Record<string, unknown>>): boolean {
  const skip = getDirectiveValues(GraphQLSkipDirective, node, variables as Variables);
  if (skip?.if === true) return false;
  const include = getDirectiveValues(GraphQLIncludeDirective, node, variables as Variables);
  return include?.if !== false;
}

function sliceArgument(nodes: readonly FieldNode[]): string | undefined {
  for (const node of nodes) {
    const path = node.directives
      ?.find((d) => d.name.value === 'slice')
      ?.arguments?.find((a) => a.name.value === 'path')?.value;
    if (path?.kind === Kind.STRING) return path.value;
  }
  return undefined;
}

/**
 * An item's slice key: its position for `$index`, else what the executor computed with FHIRPath
 * on the FHIR item (the hidden SLICE_KEY selection). Without one (the item's type has no `id`
 * to carry it), a dotted path is followed in the output.
 */
function sliceKey(item: unknown, path: string, index: number): string {
  if (path === INDEX) return String(index);
  if (typeof item !== 'object' || item === null) return path === '$this' ? String(item) : '';
  const computed = (item as Record<string, unknown>)[SLICE_KEY];
  if (typeof computed === 'string') return computed;
  let focus: unknown[] = [item];
  for (const step of path.split('.')) {
    focus = focus.flatMap((f) =>
      typeof f === 'object' && f !== null ? [(f as Record<string, unknown>)[step]].flat() : [],
    );
  }
  return focus.filter((f) => f !== null && f !== undefined).join(',');
}

const sliceKeyPaths = new WeakMap<FieldNode, string>();

/**
 * For a field with `@slice(path:)` (not `$index`): a hidden selection, added to the field's
 * selection before execution, that the executor answers with each item's slice key. The path
 * is FHIRPath on the FHIR item, which may read elements the query does not select
 * (`name @slice(path: "use") { given }`). It rides on `id`, which every FHIR element and resource
 * has as a plain String field.
 */
export function sliceKeySelection(field: FieldNode, type: GraphQLNamedType): FieldNode | undefined {
  const path = sliceArgument([field]);
  if (path === undefined || path === INDEX || !isObjectType(type)) return undefined;
  const id = type.getFields().id;
  if (!id || id.resolve || getNamedType(id.type).name !== 'String') return undefined;
  const hidden: FieldNode = {
    kind: Kind.FIELD,
    alias: { kind: Kind.NAME, value: SLICE_KEY },
    name: { kind: Kind.NAME, value: 'id' },
  };
  sliceKeyPaths.set(hidden, path);
  return hidden;
}

/** The slice path a hidden selection computes, when `node` is one. */
export function sliceKeyPath(node: FieldNode): string | undefined {
  return sliceKeyPaths.get(node);
}

/** A slice key, as the reference engine's evaluateToString: the results joined by commas. */
export async function evaluateSliceKey(
  item: unknown,
  path: string,
  graphqlType: string,
  budget: FhirPathBudget,
): Promise<string> {
  const evaluate = await compileFhirPath(path, fhirPathOf(graphqlType));
  return budget.evaluate(evaluate, item).map(String).join(',');
}

function directiveError(message: string, nodes: readonly FieldNode[]): GraphQLError {
  return new GraphQLError(message, { nodes: nodes.length > 0 ? nodes : undefined });
}
