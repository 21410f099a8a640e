/**
 * Resolvers that read or write resources: root reads, searches and mutations, reverse
 * references and Reference.resource. Each turns GraphQL arguments into a data-source call.
 * @see http://hl7.org/fhir/R4/graphql.html
 */
import { GraphQLError, type GraphQLFieldResolver } from 'graphql';
import { loadSearchDefinition } from '../../generated/search/index.js';
import { fhirError } from '../model/fhir-error.js';
import { parseSearchArguments, type RawSearchArgument } from '../search/parse-search-arguments.js';
import { SearchValueError } from '../search/search-value.js';
import { resolveContained } from './contained.js';
import type { GraphQLContext, SearchPage, SearchRequest } from './graphql-context.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { graphqlError } from './store-data-source.js';

type Args = Record<string, unknown>;
type Resolver = GraphQLFieldResolver<unknown, GraphQLContext, Args>;
const PAGING_ARGUMENTS = new Set(['_count', '_offset', '_sort', '_cursor', '_reference']);

export const read =
  (resourceType: string): Resolver =>
  (_parent, { id }, { data }) =>
    data.read(resourceType, String(id));

export const search =
  (resourceType: string): Resolver =>
  async (_parent, args, { data }) =>
    (await data.search(resourceType, searchRequest(resourceType, args))).resources;

export const connection =
  (resourceType: string): Resolver =>
  async (_parent, args, { data }) =>
    toConnection(
      await data.search(resourceType, { ...searchRequest(resourceType, args), withTotal: true }),
    );

export const reverseSearch =
  (resourceType: string): GraphQLFieldResolver<FhirResource, GraphQLContext, Args> =>
  async (parent, args, { data }) =>
    (await referring(resourceType, parent, args, data)).resources;

export const reverseConnection =
  (resourceType: string): GraphQLFieldResolver<FhirResource, GraphQLContext, Args> =>
  async (parent, args, { data }) =>
    toConnection(await referring(resourceType, parent, args, data));

/**
 * `_reverseList(_type:, _reference:, _search:)`: a reverse reference through a parameter that may
 * point to any resource, as FHIR writes it once rewritten (generic-reverse-fields.ts).
 */
export const genericReverseSearch: GraphQLFieldResolver<
  FhirResource,
  GraphQLContext,
  Args
> = async (parent, args, { data }) =>
  (await referring(String(args._type), parent, genericArguments(args), data)).resources;

export const genericReverseConnection: GraphQLFieldResolver<
  FhirResource,
  GraphQLContext,
  Args
> = async (parent, args, { data }) =>
  toConnection(await referring(String(args._type), parent, genericArguments(args), data));

/** `_search`'s entries as the search arguments they stand for, each a string or strings. */
function genericArguments({ _type, _search, ...args }: Args): Args {
  if (_search == null) return args;
  if (typeof _search !== 'object' || Array.isArray(_search))
    throw new GraphQLError('_search: an object of search arguments, such as { status: "final" }');
  for (const [name, value] of Object.entries(_search)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (PAGING_ARGUMENTS.has(name) || !values.every((v) => v == null || typeof v === 'string'))
      throw new GraphQLError(
        `_search: ${name} is not a search argument of ${String(_type)} that takes a string or a list of strings`,
      );
    args[name] = value;
  }
  return args;
}

export const create =
  (resourceType: string): Resolver =>
  (_parent, { res }, { data }) =>
    data.create(mutationResource(resourceType, res));

export const update =
  (resourceType: string): Resolver =>
  (_parent, { id, res }, { data }) =>
    data.update(resourceType, String(id), mutationResource(resourceType, res, String(id)));

export const remove =
  (resourceType: string): Resolver =>
  async (_parent, { id }, { data }) => {
    await data.delete(resourceType, String(id));
    return {
      resourceType: 'OperationOutcome',
      issue: [
        {
          severity: 'information',
          code: 'informational',
          diagnostics: `Deleted ${resourceType}/${id}`,
        },
      ],
    };
  };

/**
 * `resource(optional: true)` yields null for an unresolvable reference; otherwise it is an error.
 * `#id` points into `contained` of the resource that holds the Reference.
 */
export const resolveReference: GraphQLFieldResolver<
  { reference?: string },
  GraphQLContext,
  Args
> = async (parent, { optional, type }, { data }) => {
  const reference = parent.reference;
  const target = reference?.startsWith('#')
    ? resolveContained(parent, reference)
    : reference
      ? await data.resolve(reference)
      : undefined;
  if (target && (type === undefined || target.resourceType === type)) return target;
  // A reference with only a display (or an identifier) points at nothing to resolve.
  if (optional || !reference || (target && type !== undefined)) return null;
  throw graphqlError(fhirError(404, 'not-found', `Unable to resolve the reference ${reference}`));
};

/**
 * `res` as the resource to write. The mutation's name and `id:` say what REST's URL says, so
 * `res` may leave out its resourceType and id; one that disagrees is refused as REST refuses such
 * a body, never overwritten (the client meant something else).
 */
function mutationResource(resourceType: string, res: unknown, id?: string): FhirResource {
  const given = res as Partial<FhirResource>;
  if (given.resourceType != null && given.resourceType !== resourceType)
    throw invalid(
      `res: its resourceType (${String(given.resourceType)}) must be ${resourceType}`,
      'resourceType',
    );
  if (id !== undefined && given.id != null && given.id !== id)
    throw invalid(
      `res: its id (${String(given.id)}) must equal the id argument (${id})`,
      `${resourceType}.id`,
    );
  return { ...given, resourceType, ...(id === undefined ? {} : { id }) } as FhirResource;
}

function invalid(message: string, expression: string): GraphQLError {
  return graphqlError(fhirError(400, 'invalid', message, expression));
}

function referring(
  resourceType: string,
  parent: FhirResource,
  args: Args,
  data: GraphQLContext['data'],
): Promise<SearchPage> {
  const code = loadSearchDefinition(resourceType).arguments[String(args._reference)]?.[0];
  if (!code)
    throw new GraphQLError(
      `_reference: ${String(args._reference)} is not a reference parameter of ${resourceType}`,
    );
  return data.searchReferring(resourceType, code, parent, searchRequest(resourceType, args));
}

/**
 * A null argument (`$name: String` sent as null or left out) sets no criterion, nor does a null
 * item of a list: clients pass every variable of a typed query, set or not.
 */
function searchRequest(resourceType: string, args: Args): SearchRequest {
  const searchArgs: Record<string, RawSearchArgument> = {};
  for (const [name, value] of Object.entries(args)) {
    if (PAGING_ARGUMENTS.has(name) || value == null) continue;
    const values = Array.isArray(value) ? value.filter((v): v is string => v != null) : [value];
    if (values.length > 0) searchArgs[name] = values as string[];
  }
  if (typeof args._offset === 'number' && args._offset < 0)
    throw new GraphQLError(`_offset: ${args._offset} must be 0 or more`);
  try {
    return {
      criteria: parseSearchArguments(loadSearchDefinition(resourceType), searchArgs),
      count: (args._count ?? undefined) as number | undefined,
      offset: (args._offset ?? undefined) as number | undefined,
      sort: (args._sort ?? undefined) as string | undefined,
      // A `$cursor` variable sent as null, as on a first page, means no cursor.
      cursor: (args._cursor ?? undefined) as string | undefined,
    };
  } catch (error) {
    if (error instanceof SearchValueError)
      throw new GraphQLError(error.message, { extensions: { argument: error.argument } });
    throw error;
  }
}

function toConnection(page: SearchPage) {
  return {
    count: page.total,
    offset: page.offset,
    pageSize: page.pageSize,
    pagesize: page.pageSize,
    ...page.cursors,
    edges: page.resources.map((resource) => ({ mode: 'match', score: null, resource })),
  };
}
