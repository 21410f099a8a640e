/**
 * The FHIR interactions behind a bot's `fhir` client, on the main thread: each checked against
 * the bot's access exactly as its REST route checks a token (runtime/http/rest-routes.ts) and run
 * by the same code (runtime/rest/, the store, the GraphQL runner), so that a bot sees what a
 * client of the REST API would: the same resources, Bundles, errors and statuses.
 */
import type { GraphQLSchema } from 'graphql';
import type { Operation } from 'rfc6902';
import { searchableTypes } from '../../generated/search/index.js';
import { authorize } from '../access/authorize.js';
import type { Interaction } from '../access/scopes.js';
import type { AccessClaims } from '../access/token-service.js';
import { writeAuthor } from '../access/write-author.js';
import type { QueryLimits } from '../graphql/query-limits.js';
import { checkQuery, runQuery } from '../graphql/run-query.js';
import { createStoreDataSource } from '../graphql/store-data-source.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError, informational } from '../model/fhir-error.js';
import { processBundle } from '../rest/bundle-processor.js';
import { conditionalCreate } from '../rest/conditional-create.js';
import { CONDITIONAL_DELETE, conditionalDelete } from '../rest/conditional-delete.js';
import { CONDITIONAL_UPDATE, conditionalUpdate } from '../rest/conditional-update.js';
import { historyBundle, readVersion } from '../rest/history-bundle.js';
import { parseJsonPatch } from '../rest/json-patch.js';
import { patchResource } from '../rest/patch-resource.js';
import { parseCondition } from '../rest/search-condition.js';
import { searchBundle } from '../rest/search-bundle.js';
import { parseSearchRequest, type SearchLimits } from '../rest/search-request.js';
import type { ResourceStore } from '../store/resource-store.js';
import { searchResources } from '../store/search-store.js';

export interface BotInteractionsOptions {
  readonly store: ResourceStore;
  readonly schema: GraphQLSchema;
  readonly limits: SearchLimits;
  readonly queryLimits: QueryLimits;
  readonly projectId: string;
  /** What the bot may do: every interaction is authorized against it, as a token is. */
  readonly access: AccessClaims;
  /** The FHIR base URL, without a trailing slash, for Bundles' `fullUrl`s and links. */
  readonly base: string;
}

export class BotInteractions {
  constructor(private readonly options: BotInteractionsOptions) {}

  get base(): string {
    return this.options.base;
  }

  read(type: string, id: string): Promise<FhirResource> {
    const { store, projectId } = this.options;
    return store.read(projectId, this.allowed(type, 'r'), id);
  }

  readVersion(type: string, id: string, vid: string): Promise<FhirResource> {
    const { store, projectId } = this.options;
    return readVersion(store, projectId, this.allowed(type, 'r'), id, vid);
  }

  history(type: string, id: string): Promise<FhirResource> {
    const { store, projectId, base } = this.options;
    return historyBundle(store, projectId, base, this.allowed(type, 'r'), id);
  }

  /** A searchset Bundle with paging links, as `GET [base]/[type]?…` answers. */
  async search(type: string, query: URLSearchParams): Promise<FhirResource> {
    const { store, projectId, limits, access, base } = this.options;
    const resourceType = this.allowed(type, 's');
    const request = parseSearchRequest(resourceType, query, limits);
    const found = await searchResources(store.searchSource(), projectId, resourceType, request);
    // Included resources of types the bot may not read are left out, never shown.
    const result = {
      ...found,
      included: found.included.filter((r) => access.scopes.allows(r.resourceType, 'r')),
    };
    const url = new URL(`${base}/${resourceType}`);
    url.search = query.toString();
    return searchBundle(base, result, {
      url,
      count: request.count,
      offset: request.offset,
      elements: request.elements,
    });
  }

  async create(resource: FhirResource, ifNoneExist?: string): Promise<FhirResource> {
    const { store, projectId, limits, access } = this.options;
    const resourceType = this.allowed(resourceTypeOf(resource), 'c');
    const author = writeAuthor(access);
    if (ifNoneExist === undefined)
      return writtenResource(
        (await store.write(projectId, [{ kind: 'create', resource, author }]))[0],
      );
    this.allowed(resourceType, 's');
    const condition = parseCondition(resourceType, ifNoneExist, limits, 'If-None-Exist');
    return writtenResource(
      await conditionalCreate(store, projectId, resource, condition, undefined, undefined, author),
    );
  }

  async update(resource: FhirResource, id = resource.id): Promise<FhirResource> {
    const { store, projectId, access } = this.options;
    const resourceType = this.allowed(resourceTypeOf(resource), 'u');
    if (typeof id !== 'string' || id === '')
      throw fhirError(400, 'required', 'An update needs the resource id', `${resourceType}.id`);
    const [result] = await store.write(projectId, [
      { kind: 'update', resourceType, id, resource, author: writeAuthor(access) },
    ]);
    return writtenResource(result);
  }

  /** `PUT [base]/[type]?…`: a conditional update. */
  async upsert(resource: FhirResource, query: URLSearchParams): Promise<FhirResource> {
    const { store, projectId, limits, access } = this.options;
    const resourceType = this.allowed(resourceTypeOf(resource), 'u');
    this.allowed(resourceType, 's');
    const condition = parseCondition(resourceType, query.toString(), limits, CONDITIONAL_UPDATE);
    return writtenResource(
      await conditionalUpdate(
        store,
        projectId,
        resource,
        condition,
        undefined,
        writeAuthor(access),
      ),
    );
  }

  async patch(type: string, id: string, operations: unknown): Promise<FhirResource> {
    const { store, projectId, access } = this.options;
    const resourceType = this.allowed(type, 'u');
    const patch: Operation[] = parseJsonPatch(operations);
    const author = writeAuthor(access);
    return writtenResource(
      await patchResource(store, projectId, { resourceType, id, patch, author }),
    );
  }

  /** Answers as REST does: an OperationOutcome saying what was deleted. */
  async delete(type: string, id: string): Promise<FhirResource> {
    const { store, projectId } = this.options;
    const resourceType = this.allowed(type, 'd');
    await store.write(projectId, [{ kind: 'delete', resourceType, id }]);
    return outcome(`Deleted ${resourceType}/${id}`);
  }

  /** `DELETE [base]/[type]?…`. */
  async conditionalDelete(type: string, query: URLSearchParams): Promise<FhirResource> {
    const { store, projectId, limits } = this.options;
    const resourceType = this.allowed(type, 'd');
    this.allowed(resourceType, 's');
    const condition = parseCondition(resourceType, query.toString(), limits, CONDITIONAL_DELETE);
    const deleted = await conditionalDelete(store, projectId, condition);
    return outcome(
      deleted
        ? `Deleted ${resourceType}/${deleted.id}`
        : `No ${resourceType} matched ${condition.text}: nothing was deleted`,
    );
  }

  /** A transaction or batch Bundle, as `POST [base]`. */
  batch(bundle: unknown): Promise<FhirResource> {
    const { store, projectId, limits, access, base } = this.options;
    return processBundle(bundle, {
      store,
      projectId,
      base,
      limits,
      authorize: (type, interaction) => authorize(access, type, interaction),
      mayRead: (type) => access.scopes.allows(type, 'r'),
      author: writeAuthor(access),
    });
  }

  /**
   * As `POST $graphql` runs it (the same dialect, limits and FHIRPath budget): the result, or,
   * where `$graphql` answers 400 (a query that does not parse, validate or fit the limits, or
   * fails before execution), a 400 error with the GraphQL errors' messages.
   */
  async graphql(
    query: string,
    operationName: string | undefined,
    variables: Record<string, unknown>,
  ): Promise<unknown> {
    const { store, schema, limits, queryLimits, projectId, access } = this.options;
    const request = { query, variables, ...(operationName ? { operationName } : {}) };
    const checked = checkQuery(schema, request, queryLimits);
    if (checked.errors) throw graphqlRefusal(checked.errors);
    const data = createStoreDataSource(store, projectId, access, limits);
    const result = await runQuery(checked.run, schema, {}, data, request, queryLimits);
    if (result.errors && result.data === undefined) throw graphqlRefusal(result.errors);
    return JSON.parse(JSON.stringify(result));
  }

  /** 404 for a type the server does not know, else 403 unless the bot may `interaction` it. */
  allowed(type: string, interaction: Interaction): string {
    if (!searchableTypes.has(type))
      throw fhirError(404, 'not-found', `${type} is not a resource type this server knows`);
    authorize(this.options.access, type, interaction);
    return type;
  }
}

function resourceTypeOf(resource: FhirResource): string {
  if (typeof resource?.resourceType !== 'string')
    throw fhirError(400, 'required', 'Missing resourceType', 'resourceType');
  return resource.resourceType;
}

function writtenResource(result: { resource?: FhirResource }): FhirResource {
  return result.resource!;
}

function outcome(text: string): FhirResource {
  return informational(text) as unknown as FhirResource;
}

function graphqlRefusal(errors: readonly { message: string }[]) {
  return fhirError(400, 'invalid', errors.map((error) => error.message).join('; '));
}
