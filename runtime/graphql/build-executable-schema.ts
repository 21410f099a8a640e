/**
 * The executable schema: generated schema pieces, built without parsing SDL, with a resolver
 * from the generated wiring on every field that needs one. Built once at start-up.
 *
 * Resolvers are set on the built fields directly rather than through @graphql-tools/schema's
 * addResolversToSchema, which walks every type, field and argument of the schema: for R4's
 * many wired fields that was a third of start-up (bench/schema-startup.ts).
 */
import { GraphQLObjectType, GraphQLUnionType, type GraphQLSchema } from 'graphql';
import { loadSchemaPieces } from '../../generated/graphql/index.js';
import { loadResolverWiring } from '../../generated/resolvers/index.js';
import { buildSchemaFromPieces } from '../model/build-schema-from-pieces.js';
import type { ResolverDescriptor } from '../model/resolver-wiring.js';
import { resolverFactories } from './resolver-factories.js';

const TYPE_RESOLVER = '__resolveType';

export function buildExecutableSchema(): GraphQLSchema {
  const schema = buildSchemaFromPieces(loadSchemaPieces());
  for (const wiring of loadResolverWiring()) {
    for (const [typeName, fields] of Object.entries(wiring)) {
      const type = schema.getType(typeName);
      for (const [fieldName, descriptor] of Object.entries(fields)) {
        if (fieldName === TYPE_RESOLVER && type instanceof GraphQLUnionType) {
          type.resolveType = implement(descriptor) as GraphQLUnionType['resolveType'];
        } else if (type instanceof GraphQLObjectType && type.getFields()[fieldName]) {
          type.getFields()[fieldName].resolve = implement(descriptor) as never;
        } else {
          throw new Error(
            `Generated wiring names ${typeName}.${fieldName}, which the schema does not have`,
          );
        }
      }
    }
  }
  return schema;
}

function implement(descriptor: ResolverDescriptor): unknown {
  const factory = resolverFactories[descriptor.kind] as (d: ResolverDescriptor) => unknown;
  return factory(descriptor);
}
