/**
 * Builds a GraphQLSchema from generated schema pieces without parsing SDL: the whole of R4 has
 * about 300,000 arguments once every reverse-reference field is counted, and parsing that much
 * SDL alone takes longer than our start-up budget. Argument sets are built once and shared.
 * A piece's extensions join the type they extend, after its own fields.
 */
import {
  DirectiveLocation,
  GraphQLDirective,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLUnionType,
  specifiedDirectives,
  specifiedScalarTypes,
  type GraphQLArgument,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
  type GraphQLNamedType,
  type GraphQLType,
} from 'graphql';
import type { ArgumentData, FieldData, ObjectData, SchemaPiece } from './schema-piece.js';

/** Custom scalars (`JSON`) pass values through unchanged. */
export function buildSchemaFromPieces(pieces: readonly SchemaPiece[]): GraphQLSchema {
  const named = new Map<string, GraphQLNamedType>(specifiedScalarTypes.map((t) => [t.name, t]));
  const typeOf = createTypeResolver(named);
  const add = (type: GraphQLNamedType) => {
    if (named.has(type.name)) throw new Error(`The GraphQL type ${type.name} is defined twice`);
    named.set(type.name, type);
  };
  const extensions = extensionFields(pieces);

  for (const piece of pieces) {
    for (const scalar of piece.scalars ?? []) {
      add(new GraphQLScalarType({ name: scalar.name, description: scalar.description }));
    }
    for (const data of piece.enums ?? []) {
      const values = Object.fromEntries(data.values.map((value) => [value, { value }]));
      add(new GraphQLEnumType({ name: data.name, description: data.description, values }));
    }
    for (const data of piece.unions ?? []) {
      const types = () => data.types.map((t) => typeOf(t) as GraphQLObjectType);
      add(new GraphQLUnionType({ name: data.name, description: data.description, types }));
    }
    for (const data of piece.objects ?? []) {
      add(
        new GraphQLObjectType({
          name: data.name,
          description: data.description,
          fields: () =>
            outputFields(data.name, [...data.fields, ...(extensions.get(data.name) ?? [])], typeOf),
        }),
      );
    }
    for (const data of piece.inputs ?? []) {
      add(
        new GraphQLInputObjectType({
          name: data.name,
          description: data.description,
          fields: () => inputFields(data, typeOf),
        }),
      );
    }
  }
  for (const piece of pieces) {
    for (const { type } of piece.extensions ?? []) {
      if (!(named.get(type) instanceof GraphQLObjectType)) {
        throw new Error(
          `The piece ${piece.name} extends ${type}, which is not an object type of the schema`,
        );
      }
    }
  }

  const rootFields = (key: 'query' | 'mutation') => pieces.flatMap((piece) => piece[key] ?? []);
  const root = (name: string, fields: readonly FieldData[]) =>
    new GraphQLObjectType({ name, fields: () => outputFields(name, fields, typeOf) });
  const query = root('Query', rootFields('query'));
  const mutation = root('Mutation', rootFields('mutation'));
  const directives = pieces
    .flatMap((piece) => piece.directives ?? [])
    .map(
      (data) =>
        new GraphQLDirective({
          name: data.name,
          description: data.description,
          locations: [DirectiveLocation.FIELD],
          args: argumentConfigs(data.arguments, typeOf),
        }),
    );

  const schema = new GraphQLSchema({
    query,
    mutation,
    types: [...named.values()],
    directives: [...specifiedDirectives, ...directives],
  });
  shareArgumentSets(schema, pieces, [query, mutation], typeOf);
  return schema;
}

/** Fields that name an argument set get the set's one shared argument list. */
function shareArgumentSets(
  schema: GraphQLSchema,
  pieces: readonly SchemaPiece[],
  roots: readonly GraphQLObjectType[],
  typeOf: (ref: string) => GraphQLType,
): void {
  const sets = new Map<string, GraphQLArgument[]>();
  for (const piece of pieces) {
    for (const [name, args] of Object.entries(piece.argumentSets ?? {})) {
      if (sets.has(name)) throw new Error(`The argument set ${name} is defined twice`);
      sets.set(
        name,
        args.map((arg) => sharedArgument(arg, typeOf)),
      );
    }
  }
  const patch = (type: GraphQLObjectType, fields: readonly FieldData[]) => {
    const defined = type.getFields();
    for (const [name, , , set] of fields) {
      if (!set) continue;
      const args = sets.get(set);
      if (!args) throw new Error(`${type.name}.${name} names the unknown argument set ${set}`);
      (defined[name] as { args: readonly GraphQLArgument[] }).args = args;
    }
  };
  for (const piece of pieces) {
    for (const data of piece.objects ?? [])
      patch(schema.getType(data.name) as GraphQLObjectType, data.fields);
    for (const data of piece.extensions ?? [])
      patch(schema.getType(data.type) as GraphQLObjectType, data.fields);
  }
  patch(
    roots[0],
    pieces.flatMap((p) => p.query ?? []),
  );
  patch(
    roots[1],
    pieces.flatMap((p) => p.mutation ?? []),
  );
}

/** Each type's extension fields, in piece order. */
function extensionFields(pieces: readonly SchemaPiece[]): Map<string, FieldData[]> {
  const byType = new Map<string, FieldData[]>();
  for (const piece of pieces) {
    for (const { type, fields } of piece.extensions ?? []) {
      const list = byType.get(type) ?? [];
      list.push(...fields);
      byType.set(type, list);
    }
  }
  return byType;
}

function outputFields(
  typeName: string,
  fields: readonly FieldData[],
  typeOf: (ref: string) => GraphQLType,
): GraphQLFieldConfigMap<unknown, unknown> {
  const config: GraphQLFieldConfigMap<unknown, unknown> = {};
  for (const [name, type, description] of fields) {
    // A type's fields can come from several pieces: one must not silently replace another.
    if (Object.hasOwn(config, name))
      throw new Error(`The field ${typeName}.${name} is defined twice`);
    config[name] = { type: typeOf(type) as never, description };
  }
  return config;
}

function inputFields(
  data: ObjectData,
  typeOf: (ref: string) => GraphQLType,
): GraphQLInputFieldConfigMap {
  const config: GraphQLInputFieldConfigMap = {};
  for (const [name, type, description] of data.fields)
    config[name] = { type: typeOf(type) as never, description };
  return config;
}

function argumentConfigs(args: readonly ArgumentData[], typeOf: (ref: string) => GraphQLType) {
  return Object.fromEntries(
    args.map(([name, type, description]) => [name, { type: typeOf(type) as never, description }]),
  );
}

function sharedArgument(
  [name, type, description]: ArgumentData,
  typeOf: (ref: string) => GraphQLType,
): GraphQLArgument {
  return {
    name,
    description,
    type: typeOf(type) as GraphQLArgument['type'],
    defaultValue: undefined,
    deprecationReason: undefined,
    extensions: {},
    astNode: undefined,
  };
}

/** Resolves SDL type strings (`[HumanName!]!`) lazily, after every named type exists. */
function createTypeResolver(
  named: ReadonlyMap<string, GraphQLNamedType>,
): (ref: string) => GraphQLType {
  const cache = new Map<string, GraphQLType>();
  const resolve = (ref: string): GraphQLType => {
    const cached = cache.get(ref);
    if (cached) return cached;
    let type: GraphQLType;
    if (ref.endsWith('!')) type = new GraphQLNonNull(resolve(ref.slice(0, -1)) as never);
    else if (ref.startsWith('[')) type = new GraphQLList(resolve(ref.slice(1, -1)));
    else {
      const found = named.get(ref);
      if (!found) throw new Error(`Unknown GraphQL type ${ref}`);
      type = found;
    }
    cache.set(ref, type);
    return type;
  };
  return resolve;
}
