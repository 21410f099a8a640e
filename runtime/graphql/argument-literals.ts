/**
 * The values in a query's field arguments, fitted to the schema's standard types before
 * validation, so that the schema stays standard (`id: ID!`, search arguments `String`) and the
 * forms FHIR's GraphQL page writes keep working:
 * - a shape's placeholders (query-shape.ts), variables by now, are declared with the type of the
 *   place they stand in (`Patient(id: $__lit0)` → `$__lit0: ID!`);
 * - unquoted values where a string is expected are strings (`Patient(id: example)`,
 *   `name(use: official)`, `PatientList(active: true)`), and a quoted name where an enum is
 *   expected is that enum value (`_reference: "subject"`);
 * - a variable declared as a single value but used only where a list is expected
 *   (`$date: String` in `birthdate: $date`, as Medplum's schema has it) is declared as that list;
 *   GraphQL makes a list of one of a single value.
 * @see http://hl7.org/fhir/R4/graphql.html#searching
 */
import {
  Kind,
  TypeInfo,
  getNamedType,
  getNullableType,
  isEnumType,
  isListType,
  isNonNullType,
  isScalarType,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type TypeNode,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';
import { PLACEHOLDER, PLACEHOLDER_PREFIX, type Literal } from './query-shape.js';

export interface FittedDocument {
  readonly document: DocumentNode;
  /** The type of the place of each placeholder, by its number; undefined where there is none. */
  readonly placeholderTypes: readonly (GraphQLInputType | undefined)[];
}

/** `shape`: the document is a shape's, whose `$__lit<n>` are placeholders to declare. */
export function fitArgumentLiterals(
  schema: GraphQLSchema,
  document: DocumentNode,
  shape: boolean,
): FittedDocument {
  const typeInfo = new TypeInfo(schema);
  const placeholderTypes: (GraphQLInputType | undefined)[] = [];
  const usages = new Map<string, (GraphQLInputType | undefined)[]>();
  const fitted = visit(
    document,
    visitWithTypeInfo(typeInfo, {
      // FHIR's directives read their arguments from the query as written; a variable used in
      // one is not widened.
      Directive(node) {
        visit(node, {
          Variable: (v) =>
            void usages.set(v.name.value, [...(usages.get(v.name.value) ?? []), undefined]),
        });
        return false;
      },
      VariableDefinition: () => false,
      Variable(node) {
        const name = node.name.value;
        const type = typeInfo.getInputType() ?? undefined;
        const placeholder = shape ? PLACEHOLDER.exec(name) : null;
        if (placeholder) placeholderTypes[Number(placeholder[1])] = type;
        else usages.set(name, [...(usages.get(name) ?? []), type]);
      },
      EnumValue: (node) =>
        expectsText(typeInfo.getInputType()) ? text(node, node.value) : undefined,
      StringValue(node) {
        const type = getNamedType(typeInfo.getInputType());
        return isEnumType(type) && type.getValue(node.value)
          ? { kind: Kind.ENUM, loc: node.loc, value: node.value }
          : undefined;
      },
      IntValue: (node) =>
        expectsText(typeInfo.getInputType()) ? text(node, node.value) : undefined,
      FloatValue: (node) =>
        expectsText(typeInfo.getInputType()) ? text(node, node.value) : undefined,
      BooleanValue: (node) =>
        expectsText(typeInfo.getInputType()) ? text(node, String(node.value)) : undefined,
    }),
  );
  const definitions = fitted.definitions.map((definition) => {
    if (definition.kind !== Kind.OPERATION_DEFINITION) return definition;
    const declared = (definition.variableDefinitions ?? []).map((v) =>
      widened(v, usages.get(v.variable.name.value) ?? []),
    );
    const placeholders = placeholderTypes.flatMap((type, n): VariableDefinitionNode[] =>
      type ? [placeholderDefinition(n, type)] : [],
    );
    return { ...definition, variableDefinitions: [...declared, ...placeholders] };
  });
  return { document: { ...fitted, definitions }, placeholderTypes };
}

/**
 * The values of the placeholders as variables, each fitted to the type of its place; undefined
 * when one does not fit (a name where a number is expected, an enum value the enum lacks): the
 * query is then validated as written, which says what is wrong and where.
 */
export function placeholderValues(
  literals: readonly Literal[],
  types: readonly (GraphQLInputType | undefined)[],
): Record<string, unknown> | undefined {
  const values: Record<string, unknown> = {};
  for (let n = 0; n < literals.length; n++) {
    const type = types[n];
    const value = type === undefined ? undefined : valueFor(literals[n], type);
    if (value === undefined) return undefined;
    values[`${PLACEHOLDER_PREFIX}${n}`] = value;
  }
  return values;
}

function valueFor({ kind, value }: Literal, type: GraphQLInputType): unknown {
  const named = getNamedType(type);
  if (isEnumType(named))
    return (kind === 'name' || kind === 'string') && named.getValue(value) ? value : undefined;
  switch (named.name) {
    case 'Int': {
      const number = Number(value);
      return kind === 'int' && number >= -(2 ** 31) && number < 2 ** 31 ? number : undefined;
    }
    case 'Float':
      return kind === 'int' || kind === 'float' ? Number(value) : undefined;
    case 'Boolean':
      return kind === 'name' && (value === 'true' || value === 'false')
        ? value === 'true'
        : undefined;
    case 'String':
    case 'ID':
      return value;
    default:
      // A custom scalar (JSON) takes the value as JSON would have it.
      if (kind === 'int' || kind === 'float') return Number(value);
      if (kind === 'name' && (value === 'true' || value === 'false')) return value === 'true';
      return value;
  }
}

/** A place for text: String, ID or a list of them, where FHIR writes names and numbers unquoted. */
function expectsText(type: GraphQLInputType | null | undefined): boolean {
  const named = getNamedType(type);
  return isScalarType(named) && (named.name === 'String' || named.name === 'ID');
}

function text(node: ValueNode, value: string): ValueNode {
  return { kind: Kind.STRING, loc: node.loc, value };
}

function placeholderDefinition(n: number, type: GraphQLInputType): VariableDefinitionNode {
  return {
    kind: Kind.VARIABLE_DEFINITION,
    variable: {
      kind: Kind.VARIABLE,
      name: { kind: Kind.NAME, value: `${PLACEHOLDER_PREFIX}${n}` },
    },
    type: typeNode(type),
  };
}

function typeNode(type: GraphQLInputType): TypeNode {
  if (isNonNullType(type))
    return { kind: Kind.NON_NULL_TYPE, type: typeNode(type.ofType) as never };
  if (isListType(type))
    return { kind: Kind.LIST_TYPE, type: typeNode(type.ofType as GraphQLInputType) };
  return { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: type.name } };
}

/** `$date: String` used only where `[String]` is expected is declared `[String]`. */
function widened(
  definition: VariableDefinitionNode,
  usages: readonly (GraphQLInputType | undefined)[],
): VariableDefinitionNode {
  const declared = definition.type;
  if (declared.kind === Kind.LIST_TYPE || usages.length === 0) return definition;
  const named = declared.kind === Kind.NON_NULL_TYPE ? declared.type : declared;
  if (named.kind !== Kind.NAMED_TYPE) return definition;
  const fitsList = usages.every((type) => {
    const nullable = type && getNullableType(type);
    return (
      isListType(nullable) &&
      !isListType(getNullableType(nullable.ofType)) &&
      getNamedType(nullable).name === named.name.value
    );
  });
  if (!fitsList) return definition;
  const list = { kind: Kind.LIST_TYPE, type: declared } as const;
  return {
    ...definition,
    type: declared.kind === Kind.NON_NULL_TYPE ? { kind: Kind.NON_NULL_TYPE, type: list } : list,
  };
}
