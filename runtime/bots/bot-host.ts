/**
 * The `fhir` client a bot receives, host side: each method the sandbox forwards runs against
 * the store with the bot's access (runtime/access/bot-access.ts), authorized as REST and
 * GraphQL are, through the same code.
 */
import type { GraphQLSchema } from 'graphql';
import { searchableTypes } from '../../generated/search/index.js';
import { authorize } from '../access/authorize.js';
import type { AccessClaims } from '../access/token-service.js';
import type { Interaction } from '../access/scopes.js';
import { parseSearchRequest, type SearchLimits } from '../rest/search-request.js';
import type { FhirResource } from '../model/fhir-resource.js';
import type { QueryLimits } from '../graphql/query-limits.js';
import { checkQuery, runQuery } from '../graphql/run-query.js';
import { createStoreDataSource } from '../graphql/store-data-source.js';
import { fhirError } from '../model/fhir-error.js';
import type { ResourceStore } from '../store/resource-store.js';
import { searchResources } from '../store/search-store.js';

export interface BotHostOptions {
  readonly store: ResourceStore;
  readonly schema: GraphQLSchema;
  readonly limits: SearchLimits;
  readonly queryLimits: QueryLimits;
  readonly projectId: string;
  /** The bot's own access: every call is authorized with it. */
  readonly access: AccessClaims;
}

export type HostCall = (method: string, args: unknown[]) => Promise<unknown>;

export function createBotHost({
  store,
  schema,
  limits,
  queryLimits,
  projectId,
  access,
}: BotHostOptions): HostCall {
  const allowed = (type: unknown, interaction: Interaction): string => {
    const resourceType = knownType(type);
    authorize(access, resourceType, interaction);
    return resourceType;
  };
  const search = async (type: unknown, query: unknown): Promise<FhirResource[]> => {
    const resourceType = allowed(type, 's');
    const request = parseSearchRequest(resourceType, toParams(query), limits);
    return [
      ...(await searchResources(store.searchSource(), projectId, resourceType, request)).matches,
    ];
  };
  const methods: Record<string, (...args: unknown[]) => Promise<unknown>> = {
    readResource: async (type, id) => store.read(projectId, allowed(type, 'r'), text(id, 'id')),
    searchResources: search,
    searchOne: async (type, query) => (await search(type, withCount(query)))[0] ?? null,
    createResource: async (resource) => {
      const value = resourceOf(resource);
      allowed(value.resourceType, 'c');
      return (await store.write(projectId, [{ kind: 'create', resource: value }]))[0].resource;
    },
    updateResource: async (resource) => {
      const value = resourceOf(resource);
      allowed(value.resourceType, 'u');
      const id = text(value.id, 'resource.id');
      return (
        await store.write(projectId, [
          { kind: 'update', resourceType: value.resourceType, id, resource: value },
        ])
      )[0].resource;
    },
    deleteResource: async (type, id) => {
      await store.write(projectId, [
        { kind: 'delete', resourceType: allowed(type, 'd'), id: text(id, 'id') },
      ]);
      return null;
    },
    // As `$graphql` runs them: the same dialect, limits and FHIRPath budget.
    graphql: async (query, variables) => {
      const request = {
        query: text(query, 'query'),
        variables: (variables ?? {}) as Record<string, unknown>,
      };
      const checked = checkQuery(schema, request, queryLimits);
      if (checked.errors) return { errors: checked.errors.map((e) => ({ message: e.message })) };
      const data = createStoreDataSource(store, projectId, access, limits);
      const result = await runQuery(checked.run, schema, {}, data, request, queryLimits);
      return JSON.parse(JSON.stringify(result));
    },
  };
  return (method, args) => {
    const run = methods[method];
    if (!run)
      return Promise.reject(
        fhirError(400, 'not-supported', `fhir.${method} is not a method of the bot's client`),
      );
    return run(...args);
  };
}

function knownType(type: unknown): string {
  if (typeof type !== 'string' || !searchableTypes.has(type))
    throw fhirError(400, 'invalid', `${String(type)} is not a resource type`);
  return type;
}

function text(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '')
    throw fhirError(400, 'invalid', `${name} must be a non-empty string`);
  return value;
}

function resourceOf(value: unknown): FhirResource {
  if (
    !value ||
    typeof value !== 'object' ||
    typeof (value as FhirResource).resourceType !== 'string'
  ) {
    throw fhirError(400, 'invalid', 'Expected a FHIR resource');
  }
  return value as FhirResource;
}

/** A query as `name=x&gender=male`, or as an object of strings (or string arrays). */
function toParams(query: unknown): URLSearchParams {
  if (query === undefined || query === null) return new URLSearchParams();
  if (query instanceof URLSearchParams) return new URLSearchParams(query);
  if (typeof query === 'string') return new URLSearchParams(query.replace(/^\?/, ''));
  if (typeof query === 'object' && !Array.isArray(query)) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
    }
    return params;
  }
  throw fhirError(400, 'invalid', 'A search query is a string or an object');
}

function withCount(query: unknown): URLSearchParams {
  const params = toParams(query);
  params.set('_count', '1');
  return params;
}
