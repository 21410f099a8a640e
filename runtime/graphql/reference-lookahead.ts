/**
 * What a query reads right beneath a resource it reads by id, known before that resource is, so
 * that both go to the database side by side rather than one round trip after the other:
 * - the reference search parameters it resolves: for `DiagnosticReport(id: …) { result { resource
 *   { … } } }`, `result`, whose targets the data source reads beside the report
 *   (store/referenced-reads.ts). Only elements with a reference parameter whose expression is
 *   exactly `Type.element` count; any other reference is resolved when it comes, as before;
 * - its reverse references, `DiagnosticReportList(_reference: subject, …)`, whose target is the id
 *   the query gives.
 * Reading ahead more than the query resolves (a reference left out by a filter or `@skip`) costs
 * reads, never answers: resolving still checks access and reads what was not read ahead.
 */
import {
  getArgumentValues,
  getNamedType,
  isObjectType,
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLResolveInfo,
  type SelectionSetNode,
} from 'graphql';
import { loadSearchDefinition } from '../../generated/search/index.js';

/** By resource type: element name → the codes of the reference parameters that index it. */
const parametersByType = new Map<string, ReadonlyMap<string, readonly string[]>>();
/** By the field's node (prepared queries keep their documents): what it reads ahead. */
const codesByField = new WeakMap<object, readonly string[]>();
const reverseByField = new WeakMap<object, readonly ReverseField[]>();
const NONE: readonly string[] = [];
/**
 * The resolvers of reverse reference fields (as the generated wiring assigns them), by the type
 * that refers: DiagnosticReport for `DiagnosticReportList(_reference: …)`'s.
 */
const reverseResolvers = new WeakMap<object, string>();

/** Says that `resolver` serves reverse references from `resourceType`; returns it. */
export function reverseResolver<R extends object>(resourceType: string, resolver: R): R {
  reverseResolvers.set(resolver, resourceType);
  return resolver;
}

export function referencedCodes(resourceType: string, info: GraphQLResolveInfo): readonly string[] {
  const [node] = info.fieldNodes;
  let codes = codesByField.get(node);
  if (!codes) {
    const elements = referenceParameters(resourceType);
    const found = new Set<string>();
    for (const field of info.fieldNodes) {
      forEachField(field.selectionSet, info.fragments, (name, selectionSet) => {
        const parameters = elements.get(name);
        if (parameters && selectsResource(selectionSet, info.fragments))
          parameters.forEach((code) => found.add(code));
      });
    }
    codes = found.size === 0 ? NONE : [...found].sort();
    codesByField.set(node, codes);
  }
  return codes;
}

interface ReverseField {
  readonly node: FieldNode;
  readonly definition: GraphQLField<unknown, unknown>;
  /** The type that refers: DiagnosticReport for `DiagnosticReportList`. */
  readonly resourceType: string;
}

/** The reverse reference lists beneath the field, each with its referring type and arguments. */
export function reverseReferences(
  info: GraphQLResolveInfo,
): { readonly resourceType: string; readonly args: Record<string, unknown> }[] {
  const parentType = getNamedType(info.returnType);
  if (!isObjectType(parentType)) return [];
  const [node] = info.fieldNodes;
  let fields = reverseByField.get(node);
  if (!fields) {
    const found: ReverseField[] = [];
    for (const field of info.fieldNodes) {
      forEachFieldNode(field.selectionSet, info.fragments, (child) => {
        const definition = parentType.getFields()[child.name.value];
        const resourceType = definition?.resolve && reverseResolvers.get(definition.resolve);
        if (resourceType) found.push({ node: child, definition, resourceType });
      });
    }
    reverseByField.set(node, (fields = found));
  }
  const lists = [];
  for (const { node: child, definition, resourceType } of fields) {
    try {
      lists.push({ resourceType, args: getArgumentValues(definition, child, info.variableValues) });
    } catch {
      // Its resolver reports the bad argument.
    }
  }
  return lists;
}

function referenceParameters(resourceType: string): ReadonlyMap<string, readonly string[]> {
  let elements = parametersByType.get(resourceType);
  if (!elements) {
    const byElement = new Map<string, string[]>();
    const prefix = `${resourceType}.`;
    for (const { code, type, expression } of Object.values(
      loadSearchDefinition(resourceType).parameters,
    )) {
      const element = expression.startsWith(prefix) ? expression.slice(prefix.length) : '';
      if (type !== 'reference' || !/^[a-z][A-Za-z0-9]*$/.test(element)) continue;
      byElement.set(element, [...(byElement.get(element) ?? []), code]);
    }
    parametersByType.set(resourceType, (elements = byElement));
  }
  return elements;
}

/** Calls `visit` with each field of the selection set, through fragments, by element name. */
function forEachField(
  selectionSet: SelectionSetNode | undefined,
  fragments: Record<string, FragmentDefinitionNode>,
  visit: (name: string, selectionSet: SelectionSetNode | undefined) => void,
): void {
  forEachFieldNode(selectionSet, fragments, (node) => visit(node.name.value, node.selectionSet));
}

function forEachFieldNode(
  selectionSet: SelectionSetNode | undefined,
  fragments: Record<string, FragmentDefinitionNode>,
  visit: (node: FieldNode) => void,
  seen = new Set<string>(),
): void {
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === Kind.FIELD) {
      visit(selection);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      forEachFieldNode(selection.selectionSet, fragments, visit, seen);
    } else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      forEachFieldNode(fragments[selection.name.value]?.selectionSet, fragments, visit, seen);
    }
  }
}

function selectsResource(
  selectionSet: SelectionSetNode | undefined,
  fragments: Record<string, FragmentDefinitionNode>,
): boolean {
  let found = false;
  forEachField(selectionSet, fragments, (name) => (found ||= name === 'resource'));
  return found;
}
