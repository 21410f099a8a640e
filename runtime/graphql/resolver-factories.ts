import type { GraphQLFieldResolver, GraphQLTypeResolver } from 'graphql';
import type { ResolverDescriptor, ResolverKind } from '../model/resolver-wiring.js';
import { filterList } from './filter-list.js';
import * as resources from './resource-resolvers.js';

type Implementation = GraphQLFieldResolver<any, any, any> | GraphQLTypeResolver<any, any>;
type Factory<K extends ResolverKind> = (
  descriptor: Extract<ResolverDescriptor, { kind: K }>,
) => Implementation;

/** One implementation per kind of generated wiring; TypeScript checks that none is missing. */
export const resolverFactories: { readonly [K in ResolverKind]: Factory<K> } = {
  read: ({ resourceType }) => resources.read(resourceType),
  search: ({ resourceType }) => resources.search(resourceType),
  connection: ({ resourceType }) => resources.connection(resourceType),
  create: ({ resourceType }) => resources.create(resourceType),
  update: ({ resourceType }) => resources.update(resourceType),
  delete: ({ resourceType }) => resources.remove(resourceType),
  reverseSearch: ({ resourceType }) => resources.reverseSearch(resourceType),
  reverseConnection: ({ resourceType }) => resources.reverseConnection(resourceType),
  genericReverseSearch: () => resources.genericReverseSearch,
  genericReverseConnection: () => resources.genericReverseConnection,
  filterList: () => filterList,
  resolveReference: () => resources.resolveReference,
  resourceTypeOf: () => (value: { resourceType?: string }) => value.resourceType,
};
