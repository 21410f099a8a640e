/**
 * The GraphQL resolvers' view of the store for one request: the caller's project and scopes,
 * reads batched per GraphQL level with DataLoader (one SQL statement for all the references a
 * level resolves), and searches through the same code as REST.
 */
import DataLoader from 'dataloader';
import { GraphQLError } from 'graphql';
import { loadSearchDefinition, searchableTypes } from '../../generated/search/index.js';
import type { Interaction } from '../access/scopes.js';
import type { AccessClaims } from '../access/token-service.js';
import { writeAuthor } from '../access/write-author.js';
import { parseSort, type SearchLimits } from '../rest/search-request.js';
import { type SortKey } from '../store/search-query.js';
import { toFhirError, fhirError } from '../model/fhir-error.js';
import { authorize } from '../access/authorize.js';
import type { ResourceStore } from '../store/resource-store.js';
import { searchResources } from '../store/search-store.js';
import type { FhirDataSource, SearchPage, SearchRequest } from './graphql-context.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { createReferringLoader } from './referring-loader.js';
import { codeOfStatus } from './error-codes.js';

export function createStoreDataSource(
  store: ResourceStore,
  projectId: string,
  access: AccessClaims,
  limits: SearchLimits,
): FhirDataSource {
  const loader = new DataLoader<string, FhirResource | undefined>(async (keys) => {
    const found = await store.readMany(projectId, keys.map(parseKey));
    return keys.map((k) => found.get(k));
  });
  const referring = createReferringLoader(store.searchSource(), projectId);
  const allow = (resourceType: string, interaction: Interaction) =>
    guard(() => authorize(access, resourceType, interaction));
  const search = async (resourceType: string, request: SearchRequest): Promise<SearchPage> => {
    allow(resourceType, 's');
    const count = Math.min(request.count ?? limits.defaultCount, limits.maxCount);
    const offset =
      request.cursor !== undefined ? cursorOffset(request.cursor) : (request.offset ?? 0);
    const result = await guardAsync(() =>
      searchResources(store.searchSource(), projectId, resourceType, {
        criteria: request.criteria,
        count,
        offset,
        sort: sortKeys(resourceType, request.sort),
        total: request.withTotal ? 'accurate' : 'none',
        summaryCount: false,
        include: [],
        revinclude: [],
      }),
    );
    for (const resource of result.matches)
      loader.prime(`${resource.resourceType}/${resource.id}`, resource);
    return page(result.matches, result.total ?? 0, offset, count);
  };
  return {
    async read(resourceType, id) {
      allow(resourceType, 'r');
      const resource = await loader.load(`${resourceType}/${id}`);
      if (!resource)
        throw graphqlError(fhirError(404, 'not-found', `${resourceType}/${id} is not known`));
      return resource;
    },
    search,
    async searchReferring(resourceType, code, target, request) {
      allow(resourceType, 's');
      const count = Math.min(request.count ?? limits.defaultCount, limits.maxCount);
      const offset =
        request.cursor !== undefined ? cursorOffset(request.cursor) : (request.offset ?? 0);
      const sort = sortKeys(resourceType, request.sort);
      const all = await guardAsync(() =>
        referring.load({
          resourceType,
          code,
          criteria: request.criteria,
          sort,
          target: { resourceType: target.resourceType, id: target.id! },
        }),
      );
      const resources = all.slice(offset, offset + count);
      for (const resource of resources)
        loader.prime(`${resource.resourceType}/${resource.id}`, resource);
      return page(resources, all.length, offset, count);
    },
    async resolve(reference) {
      const match = /^([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/[^/]+)?$/.exec(
        reference,
      );
      if (!match || !searchableTypes.has(match[1])) return undefined;
      allow(match[1], 'r');
      return loader.load(`${match[1]}/${match[2]}`);
    },
    async create(resource) {
      allow(resource.resourceType, 'c');
      const [result] = await guardAsync(() =>
        store.write(projectId, [{ kind: 'create', resource, author: writeAuthor(access) }]),
      );
      return result.resource!;
    },
    async update(resourceType, id, resource) {
      allow(resourceType, 'u');
      const [result] = await guardAsync(() =>
        store.write(projectId, [
          { kind: 'update', resourceType, id, resource, author: writeAuthor(access) },
        ]),
      );
      return result.resource!;
    },
    async delete(resourceType, id) {
      allow(resourceType, 'd');
      await guardAsync(() => store.write(projectId, [{ kind: 'delete', resourceType, id }]));
    },
  };
}

/** Opaque cursors: the page's offset, base64url-encoded. */
export function encodeCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
}

/** Every page has it, most as their last one too (a list without its total has no later page). */
const FIRST_CURSOR = encodeCursor(0);

function cursorOffset(cursor: string): number {
  try {
    const { o } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { o: unknown };
    if (Number.isSafeInteger(o) && (o as number) >= 0) return o as number;
  } catch {
    // fall through to the error below
  }
  throw graphqlError(
    fhirError(400, 'invalid', `_cursor: "${cursor}" is not a cursor this server gave out`),
  );
}

function page(
  resources: readonly FhirResource[],
  total: number,
  offset: number,
  count: number,
): SearchPage {
  const first = { first: FIRST_CURSOR };
  // `_count: 0` asks for the total alone, as REST's `_count=0` does: pages of nothing have no
  // previous, next or last one, and stepping by 0 would only ever lead back to this one.
  if (count === 0) return { resources, total, offset, pageSize: 0, cursors: first };
  const last = total === 0 ? 0 : Math.floor((total - 1) / count) * count;
  return {
    resources,
    total,
    offset,
    pageSize: count,
    cursors: {
      ...first,
      ...(offset > 0 ? { previous: encodeCursor(Math.max(0, offset - count)) } : {}),
      ...(offset + count < total ? { next: encodeCursor(offset + count) } : {}),
      last: last === 0 ? FIRST_CURSOR : encodeCursor(last),
    },
  };
}

/** GraphQL `_sort: "-birthdate,address_city"`: REST's rules, with `_` for `-` in codes. */
function sortKeys(resourceType: string, sort: string | undefined): SortKey[] {
  if (!sort) return [];
  const toCode = (key: string) => (key.startsWith('_') ? key : key.replaceAll('_', '-'));
  return guard(() => parseSort(loadSearchDefinition(resourceType), sort, toCode));
}

function parseKey(key: string): { resourceType: string; id: string } {
  const slash = key.indexOf('/');
  return { resourceType: key.slice(0, slash), id: key.slice(slash + 1) };
}

/** A FHIR error as a GraphQL field error carrying its code and OperationOutcome. */
export function graphqlError(thrown: unknown): GraphQLError {
  if (thrown instanceof GraphQLError) return thrown;
  const error = toFhirError(thrown);
  return new GraphQLError(error.issues.map((i) => i.diagnostics).join('; '), {
    extensions: {
      status: error.status,
      code: codeOfStatus(error.status, error.issues[0]?.code, 'execution'),
      resource: error.outcome,
    },
  });
}

function guard<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw graphqlError(error);
  }
}

async function guardAsync<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw graphqlError(error);
  }
}
