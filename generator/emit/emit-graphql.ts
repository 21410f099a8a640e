/**
 * Writes each schema piece twice: as data the runtime builds the schema from
 * (`generated/graphql/Patient.ts`) and as SDL printed by graphql's printer from that very schema
 * (`generated/graphql/Patient.graphql`), for people to read and diff. The SDL files together form
 * the whole schema; `generated/graphql/index.ts` lists the pieces.
 */
import {
  GraphQLObjectType,
  GraphQLSchema,
  lexicographicSortSchema,
  printSchema,
  printType,
  type GraphQLFieldConfigMap,
} from 'graphql';
import { buildSchemaFromPieces } from '../../runtime/model/build-schema-from-pieces.js';
import type { SchemaPiece } from '../../runtime/model/schema-piece.js';
import type { SpecIR } from '../ir/ir-types.js';
import { sortedBy } from '../ir/naming.js';
import { jsonFile, jsonIndexFile, type GeneratedFile } from './generated-file.js';
import { buildSchemaPieces } from './graphql-pieces.js';

export function emitGraphQL(ir: SpecIR): GeneratedFile[] {
  const pieces = buildSchemaPieces(ir);
  const sources = sourcesByPiece(ir);
  const schema = lexicographicSortSchema(buildSchemaFromPieces(pieces));
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
 * Prints the types a piece defines, sorted, then its root fields as `extend type Query`. The
 * shared piece declares the root types and the directives.
 */
function createPiecePrinter(schema: GraphQLSchema): (piece: SchemaPiece) => string {
  const rootFields = (type: GraphQLObjectType | null | undefined) => type!.toConfig().fields;
  const query = rootFields(schema.getQueryType());
  const mutation = rootFields(schema.getMutationType());
  const extend = (
    name: string,
    all: GraphQLFieldConfigMap<unknown, unknown>,
    picked: readonly string[],
  ) => {
    if (picked.length === 0) return [];
    const fields = Object.fromEntries(sortedBy(picked, (n) => n).map((n) => [n, all[n]]));
    return [`extend ${printType(new GraphQLObjectType({ name, fields }))}`];
  };
  return (piece) => {
    const typeNames = [
      piece.scalars,
      piece.enums,
      piece.unions,
      piece.objects,
      piece.inputs,
    ].flatMap((list) => (list ?? []).map((t) => t.name));
    const blocks = [
      ...(piece.directives?.length
        ? [printSchema(new GraphQLSchema({ directives: schema.getDirectives() })).trim()]
        : []),
      ...(piece.name === 'schema' ? ['type Query', 'type Mutation'] : []),
      ...sortedBy(typeNames, (n) => n).map((name) => printType(schema.getType(name)!)),
      ...extend(
        'Query',
        query,
        (piece.query ?? []).map(([name]) => name),
      ),
      ...extend(
        'Mutation',
        mutation,
        (piece.mutation ?? []).map(([name]) => name),
      ),
    ];
    return blocks.join('\n\n') + '\n';
  };
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
