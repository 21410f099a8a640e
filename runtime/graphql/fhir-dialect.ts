/**
 * FHIR's GraphQL page writes queries that standard GraphQL rejects. rewriteFhirDialect turns them
 * into standard queries before validation, so that the spec's examples and the HL7 conformance
 * cases (test/fixtures/conformance/fhir-graphql-r4) run as written:
 * 1. Resource fields selected directly on `Reference.resource`, a union of every resource type
 *    (`subject { resource { active } }`): each such field becomes inline fragments on the member
 *    types that have it with the same shape (leaf or not, the same arguments), among the types the
 *    element may refer to (Observation.subject: Patient, Group, Device, Location). A field that no
 *    member has stays, and validation names it. Nested, the fragments multiply: a query that
 *    grows past MAX_SELECTIONS is refused with advice to write the fragments itself.
 * 2. `Patient(_id: example)`, R5's spelling of the read argument, means `Patient(id: example)`;
 *    a reverse reference through a parameter that may point to any resource
 *    (`ProvenanceList(_reference: target)`) becomes the generic field that serves it.
 * 3. A variable declared nullable but used in `@include(if:)`/`@skip(if:)` (`$var: Boolean`) is
 *    read as `Boolean!`; a missing value is then an error, as in the reference engine.
 * It also adds the hidden selection that carries each item's `@slice` key (directives.ts).
 * Unquoted values (`Patient(id: example)`) are fitted to their arguments' types afterwards
 * (argument-literals.ts).
 * @see http://hl7.org/fhir/R4/graphql.html
 */
import {
  Kind,
  getNamedType,
  isCompositeType,
  isEnumType,
  isInterfaceType,
  isLeafType,
  isObjectType,
  isUnionType,
  visit,
  type ArgumentNode,
  type DefinitionNode,
  type DocumentNode,
  type FieldNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type NameNode,
  type ObjectFieldNode,
  type ValueNode,
  type GraphQLSchema,
  type GraphQLUnionType,
  type InlineFragmentNode,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import { loadDefinitionRegistry } from '../../generated/definitions/index.js';
import { GENERIC_REVERSE_FIELDS, GENERIC_REVERSE_TYPES } from '../model/generic-reverse-fields.js';
import { sliceKeySelection } from './directives.js';

/** Selections a rewritten query may have, counted as a tree (validation walks it so). */
export const MAX_SELECTIONS = 20_000;

type Targets = readonly string[] | undefined;

export function rewriteFhirDialect(schema: GraphQLSchema, document: DocumentNode): DocumentNode {
  const memo = new Map<SelectionSetNode, Map<string, SelectionSetNode>>();

  /** `targets`: the resource types that the parent, a Reference or the resource union, may hold. */
  const rewriteSet = (
    set: SelectionSetNode,
    parent: GraphQLCompositeType,
    targets?: Targets,
  ): SelectionSetNode => {
    const byType = memo.get(set) ?? new Map<string, SelectionSetNode>();
    memo.set(set, byType);
    const key = `${parent.name}:${targets?.join(',') ?? '*'}`;
    const known = byType.get(key);
    if (known) return known;
    const selections = set.selections.flatMap((s) => rewriteSelection(s, parent, targets));
    const result = { ...set, selections };
    byType.set(key, result);
    return result;
  };

  const rewriteSelection = (
    selection: SelectionNode,
    parent: GraphQLCompositeType,
    targets: Targets,
  ): SelectionNode[] => {
    if (selection.kind === Kind.FIELD) {
      if (!isUnionType(parent) || selection.name.value === '__typename')
        return [rewriteField(selection, parent, targets)];
      const fragments = onMembers(selection, parent, targets);
      return fragments.length > 0 ? fragments : [selection];
    }
    if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type = selection.typeCondition
        ? schema.getType(selection.typeCondition.name.value)
        : parent;
      if (!isCompositeType(type)) return [selection];
      const selectionSet = rewriteSet(selection.selectionSet, type, targets);
      return [{ ...selection, selectionSet }];
    }
    return [selection];
  };

  const rewriteField = (
    field: FieldNode,
    parent: GraphQLCompositeType,
    targets: Targets,
  ): FieldNode => {
    if (!isObjectType(parent) && !isInterfaceType(parent)) return field;
    const definition = parent.getFields()[field.name.value];
    if (!definition || takesFewerArguments(field, definition)) {
      const generic = genericReverseField(schema, field, parent);
      return generic ? rewriteField(generic.field, parent, [generic.source]) : field;
    }
    const args = readArgument(field.arguments, definition);
    const type = getNamedType(definition.type);
    if (!field.selectionSet || !isCompositeType(type))
      return args === field.arguments ? field : { ...field, arguments: args };
    // Reference.resource takes the Reference's targets; a Reference takes its element's; a
    // generic reverse reference, its `_type`, down to its page's edges' resources.
    const childTargets =
      isUnionType(type) || GENERIC_PAGE_TYPES.has(type.name) || GENERIC_FIELDS.has(field.name.value)
        ? targets
        : referenceTargets(parent.name, field.name.value);
    const rewritten = rewriteSet(field.selectionSet, type, childTargets);
    const hidden = sliceKeySelection(field, type);
    const selectionSet = hidden
      ? { ...rewritten, selections: [...rewritten.selections, hidden] }
      : rewritten;
    return { ...field, arguments: args, selectionSet };
  };

  const onMembers = (
    field: FieldNode,
    union: GraphQLUnionType,
    targets: Targets,
  ): InlineFragmentNode[] =>
    union
      .getTypes()
      .filter((member) => (!targets || targets.includes(member.name)) && fits(field, member))
      .map((member) => ({
        kind: Kind.INLINE_FRAGMENT,
        loc: field.loc,
        typeCondition: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: member.name } },
        selectionSet: {
          kind: Kind.SELECTION_SET,
          loc: field.loc,
          selections: [rewriteField(field, member, undefined)],
        },
      }));

  const nonNullIfs = conditionVariables(document);
  const definitions = document.definitions.map((definition): DefinitionNode => {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      const type = schema.getType(definition.typeCondition.name.value);
      if (!isCompositeType(type)) return definition;
      return { ...definition, selectionSet: rewriteSet(definition.selectionSet, type) };
    }
    if (definition.kind !== Kind.OPERATION_DEFINITION) return definition;
    const root = schema.getRootType(definition.operation);
    if (!root) return definition;
    return {
      ...nonNullConditions(definition, nonNullIfs),
      selectionSet: rewriteSet(definition.selectionSet, root),
    };
  });
  return { ...document, definitions };
}

/** How many selections `document` has when its shared parts are counted every time they occur. */
export function countSelections(document: DocumentNode): number {
  const sizes = new Map<SelectionSetNode, number>();
  const size = (set: SelectionSetNode): number => {
    let known = sizes.get(set);
    if (known === undefined) {
      known = 0;
      for (const s of set.selections)
        known +=
          1 + (s.kind === Kind.FRAGMENT_SPREAD || !s.selectionSet ? 0 : size(s.selectionSet));
      sizes.set(set, known);
    }
    return known;
  };
  let total = 0;
  for (const d of document.definitions)
    if (d.kind === Kind.OPERATION_DEFINITION || d.kind === Kind.FRAGMENT_DEFINITION)
      total += size(d.selectionSet);
  return total;
}

const GENERIC_FIELDS = new Set<string>(Object.values(GENERIC_REVERSE_FIELDS));
const GENERIC_PAGE_TYPES = new Set<string>(Object.values(GENERIC_REVERSE_TYPES));
const REVERSE_FIELD = /^([A-Z][A-Za-z]*)(List|Connection)$/;
/** Arguments the generic reverse fields take themselves; the others go into `_search`. */
const PAGING = new Set(['_reference', '_count', '_offset', '_sort', '_cursor']);

/**
 * `ProvenanceList(_reference: target, agent: "…")` on a resource type without that field — a
 * reverse reference through a parameter that may point to any resource — as the generic field
 * that serves it: `ProvenanceList: _reverseList(_type: Provenance, _reference: "target",
 * _search: { agent: "…" })` (generic-reverse-fields.ts). `source`: the referring type.
 */
function genericReverseField(
  schema: GraphQLSchema,
  field: FieldNode,
  parent: GraphQLObjectType | GraphQLInterfaceType,
): { field: FieldNode; source: string } | undefined {
  const match = REVERSE_FIELD.exec(field.name.value);
  const generic = match && GENERIC_REVERSE_FIELDS[match[2] as 'List' | 'Connection'];
  if (!match || !parent.getFields()[generic!]) return undefined;
  const source = match[1];
  const resourceTypes = schema.getType('ResourceType');
  if (!isEnumType(resourceTypes) || !resourceTypes.getValue(source)) return undefined;
  if (!field.arguments?.some((a) => a.name.value === '_reference')) return undefined;
  const name = (value: string): NameNode => ({ kind: Kind.NAME, value });
  const search: ObjectFieldNode[] = [];
  const args: ArgumentNode[] = [
    { kind: Kind.ARGUMENT, name: name('_type'), value: { kind: Kind.ENUM, value: source } },
  ];
  for (const arg of field.arguments) {
    if (arg.name.value === '_reference' && arg.value.kind === Kind.ENUM)
      args.push({
        ...arg,
        value: { kind: Kind.STRING, value: arg.value.value, loc: arg.value.loc },
      });
    else if (PAGING.has(arg.name.value)) args.push(arg);
    else
      search.push({
        kind: Kind.OBJECT_FIELD,
        name: arg.name,
        value: asText(arg.value),
        loc: arg.loc,
      });
  }
  if (search.length > 0)
    args.push({
      kind: Kind.ARGUMENT,
      name: name('_search'),
      value: { kind: Kind.OBJECT, fields: search },
    });
  return {
    field: { ...field, alias: field.alias ?? field.name, name: name(generic!), arguments: args },
    source,
  };
}

/**
 * A typed reverse reference given search arguments it does not declare: a paged one
 * (`DiagnosticReportConnection(_reference: subject, status: final)`) declares paging only, and
 * runs as the generic field, which takes them.
 */
function takesFewerArguments(field: FieldNode, definition: GraphQLField<unknown, unknown>) {
  if (
    !field.name.value.endsWith('Connection') ||
    !definition.args.some((a) => a.name === '_reference')
  )
    return false;
  return (field.arguments ?? []).some(
    (arg) => !definition.args.some((a) => a.name === arg.name.value),
  );
}

/** Unquoted values as strings, as search arguments take them (`_search` is untyped JSON). */
function asText(value: ValueNode): ValueNode {
  switch (value.kind) {
    case Kind.ENUM:
    case Kind.INT:
    case Kind.FLOAT:
      return { kind: Kind.STRING, value: value.value, loc: value.loc };
    case Kind.BOOLEAN:
      return { kind: Kind.STRING, value: String(value.value), loc: value.loc };
    case Kind.LIST:
      return { ...value, values: value.values.map(asText) };
    default:
      return value;
  }
}

/** The resource types a Reference element may point to; undefined for any. */
function referenceTargets(graphqlType: string, fieldName: string): Targets {
  const element = loadDefinitionRegistry().types[graphqlType]?.elements.find(
    (e) => e.name === fieldName,
  );
  return element?.targets && element.targets.length > 0 ? element.targets : undefined;
}

/** A member type can take the field when it has one of the same shape. */
function fits(field: FieldNode, member: GraphQLObjectType): boolean {
  const definition = member.getFields()[field.name.value];
  if (!definition) return false;
  if (isLeafType(getNamedType(definition.type)) !== !field.selectionSet) return false;
  return (field.arguments ?? []).every((arg) =>
    definition.args.some((d) => d.name === arg.name.value),
  );
}

/** `_id` for a field that takes `id` and not `_id`: the read field `Patient(id:)`. */
function readArgument(
  args: readonly ArgumentNode[] | undefined,
  definition: GraphQLField<unknown, unknown>,
): readonly ArgumentNode[] | undefined {
  const takes = (name: string) => definition.args.some((a) => a.name === name);
  if (!args || !takes('id') || takes('_id') || args.some((a) => a.name.value === 'id')) return args;
  return args.map((arg) =>
    arg.name.value === '_id' ? { ...arg, name: { ...arg.name, value: 'id' } } : arg,
  );
}

/** Variables used as `if:` of @include or @skip. */
function conditionVariables(document: DocumentNode): ReadonlySet<string> {
  const names = new Set<string>();
  visit(document, {
    Directive(node) {
      if (node.name.value !== 'include' && node.name.value !== 'skip') return;
      for (const arg of node.arguments ?? [])
        if (arg.name.value === 'if' && arg.value.kind === Kind.VARIABLE)
          names.add(arg.value.name.value);
    },
  });
  return names;
}

function nonNullConditions(
  operation: OperationDefinitionNode,
  names: ReadonlySet<string>,
): OperationDefinitionNode {
  if (names.size === 0 || !operation.variableDefinitions) return operation;
  return {
    ...operation,
    variableDefinitions: operation.variableDefinitions.map((v) =>
      names.has(v.variable.name.value) &&
      v.type.kind !== Kind.NON_NULL_TYPE &&
      v.defaultValue === undefined
        ? { ...v, type: { kind: Kind.NON_NULL_TYPE, type: v.type } }
        : v,
    ),
  };
}
