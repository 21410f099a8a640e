/**
 * Writes each schema piece twice: as data the runtime builds the schema from
 * (`generated/graphql/Patient.json`) and as SDL printed by graphql's printer from that very schema
 * (`generated/graphql/Patient.graphql`), for people to read and diff. The SDL files together form
 * the whole schema; `generated/graphql/index.ts` lists the pieces.
 */
import {
  GraphQLObjectType,
  GraphQLSchema,
  printSchema,
  printType,
  type GraphQLFieldConfigMap,
} from 'graphql';
import { buildSchemaFromPieces } from '../../runtime/model/build-schema-from-pieces.js';
import type { FieldData, SchemaPiece } from '../../runtime/model/schema-piece.js';
import type { SpecIR } from '../ir/ir-types.js';
import { sortedBy } from '../ir/naming.js';
import { jsonFile, jsonIndexFile, type GeneratedFile } from './generated-file.js';
import { buildSchemaPieces } from './graphql-pieces.js';

export function emitGraphQL(ir: SpecIR): GeneratedFile[] {
  const pieces = buildSchemaPieces(ir);
  const sources = sourcesByPiece(ir);
  const schema = buildSchemaFromPieces(pieces);
  const print = createPiecePrinter(schema);
  const files = pieces.flatMap((piece) => {
    const from = sources.get(piece.name) ?? allSources(ir);
    return [
      { path: `graphql/${piece.name}.graphql`, sources: from, content: print(piece) },
      jsonFile(`graphql/${piece.name}.json`, from, piece),
    ];
  });
  return [...files, indexFile(pieces, allSources(ir))];
}

function indexFile(pieces: readonly SchemaPiece[], sources: readonly string[]): GeneratedFile {
  return jsonIndexFile(
    'graphql',
    pieces.map((p) => p.name),
    sources,
    {
      type: 'SchemaPiece',
      typeModule: '../../runtime/model/schema-piece.js',
      loader: 'loadSchemaPieces',
      docs: 'Every piece of the GraphQL schema, sorted by name.',
    },
  );
}

/**
 * Prints the types a piece defines, sorted, then its root fields as `extend type Query` and
 * `extend type Mutation`, then the fields it adds to other types as `extend type T`, sorted by T.
 * The shared piece declares the root types and the directives, sorted. A type's fields and
 * arguments keep the schema's order, which follows the StructureDefinition; the fields of an
 * `extend type`, which have no such order, are sorted.
 */
function createPiecePrinter(schema: GraphQLSchema): (piece: SchemaPiece) => string {
  const directives = sortedBy(schema.getDirectives(), (d) => d.name);
  const fieldsByType = new Map<string, GraphQLFieldConfigMap<unknown, unknown>>();
  // An object type's fields come from several pieces: each piece prints the ones it holds.
  const printObject = (name: string, picked: readonly FieldData[], description?: string) => {
    let all = fieldsByType.get(name);
    if (!all) {
      all = (schema.getType(name) as GraphQLObjectType).toConfig().fields;
      fieldsByType.set(name, all);
    }
    const fields = Object.fromEntries(picked.map(([n]) => [n, all[n]]));
    return printType(new GraphQLObjectType({ name, description, fields }));
  };
  const extend = (name: string, fields: readonly FieldData[]) =>
    fields.length === 0 ? [] : ['extend ' + printObject(name, sortedBy(fields, fieldName))];
  return (piece) => {
    const objects = new Map((piece.objects ?? []).map((o) => [o.name, o]));
    const typeNames = [
      piece.scalars,
      piece.enums,
      piece.unions,
      piece.objects,
      piece.inputs,
    ].flatMap((list) => (list ?? []).map((t) => t.name));
    const blocks = [
      ...(piece.directives?.length ? [printSchema(new GraphQLSchema({ directives })).trim()] : []),
      ...(piece.name === 'schema' ? ['type Query', 'type Mutation'] : []),
      ...sortedBy(typeNames, (n) => n).map((name) => {
        const object = objects.get(name);
        const type = schema.getType(name)!;
        return object
          ? printObject(name, object.fields, type.description ?? undefined)
          : printType(type);
      }),
      ...extend('Query', piece.query ?? []),
      ...extend('Mutation', piece.mutation ?? []),
      ...sortedBy(piece.extensions ?? [], (e) => e.type).flatMap((e) => extend(e.type, e.fields)),
    ];
    return blocks.join('\n\n') + '\n';
  };
}

function fieldName([name]: FieldData): string {
  return name;
}

function sourcesByPiece(ir: SpecIR): Map<string, readonly string[]> {
  const sources = new Map<string, readonly string[]>();
  for (const type of [...ir.datatypes, ...ir.resources]) {
    sources.set(
      type.owner,
      sortedBy(new Set([...(sources.get(type.owner) ?? []), ...type.sources]), (s) => s),
    );
  }
  return sources;
}

function allSources(ir: SpecIR): readonly string[] {
  return sortedBy(new Set([...ir.datatypes, ...ir.resources].flatMap((t) => t.sources)), (s) => s);
}
