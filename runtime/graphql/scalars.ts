/**
 * Implementations of the generated custom scalars. `SearchValue` accepts what FHIR's GraphQL page
 * writes unquoted (`Patient(id: example)`, `name(use: official)`, `PatientList(active: true)`),
 * which standard GraphQL would read as enum, number or boolean literals; lists mean every value.
 * @see http://hl7.org/fhir/R4/graphql.html#searching
 */
import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';

type SearchValue = string | string[];

export const SearchValueScalar = new GraphQLScalarType<SearchValue, SearchValue>({
  name: 'SearchValue',
  serialize: (value) => value as SearchValue,
  parseValue: (value) => fromJson(value),
  parseLiteral: (node, variables) => fromLiteral(node, variables),
});

function fromLiteral(node: ValueNode, variables?: Record<string, unknown> | null): SearchValue {
  switch (node.kind) {
    case Kind.STRING:
    case Kind.ENUM:
    case Kind.INT:
    case Kind.FLOAT:
      return node.value;
    case Kind.BOOLEAN:
      return String(node.value);
    case Kind.VARIABLE:
      return fromJson(variables?.[node.name.value]);
    case Kind.LIST:
      return node.values.map((item) => {
        const value = fromLiteral(item, variables);
        if (Array.isArray(value))
          throw new GraphQLError('A search value list cannot contain lists', { nodes: item });
        return value;
      });
    default:
      throw new GraphQLError(
        `A search value is a string, a name, a number, a boolean or a list of them`,
        { nodes: node },
      );
  }
}

function fromJson(value: unknown): SearchValue {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (
    Array.isArray(value) &&
    value.every((v) => ['string', 'number', 'boolean'].includes(typeof v))
  ) {
    return value.map(String);
  }
  throw new GraphQLError(
    `A search value is a string, a number, a boolean or a list of them, not ${JSON.stringify(value)}`,
  );
}

/** Scalars by name, for buildSchemaFromPieces. */
export const scalarImplementations = { SearchValue: SearchValueScalar } as const;
