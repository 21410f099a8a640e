/**
 * One Bundle entry: its request read into a typed operation (conditional ones with their search
 * parsed, a PATCH with its JSON Patch), checked against the token's scopes, and turned into a
 * store write; and the `urn:uuid:` references between entries.
 * @see http://hl7.org/fhir/R4/bundle.html#references
 * @see http://hl7.org/fhir/R4/http.html#transaction
 */
import { randomUUID } from 'node:crypto';
import type { Operation } from 'rfc6902';
import { searchableTypes } from '../../generated/search/index.js';
import type { Interaction } from '../access/scopes.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import type { WriteAuthor, WriteOperation } from '../store/write-operation.js';
import { CONDITIONAL_DELETE } from './conditional-delete.js';
import type { ReadConditions } from './conditional-read.js';
import { CONDITIONAL_UPDATE } from './conditional-update.js';
import { jsonPatchFromBinary } from './json-patch.js';
import { parseCondition, type SearchCondition } from './search-condition.js';
import type { SearchLimits } from './search-request.js';

export interface BundleEntry {
  readonly fullUrl?: string;
  readonly resource?: FhirResource;
  readonly request?: {
    readonly method?: string;
    readonly url?: string;
    readonly ifMatch?: string;
    readonly ifNoneExist?: string;
    readonly ifNoneMatch?: string;
    readonly ifModifiedSince?: string;
  };
}

/**
 * A create; `id` is the one it will have, so that other entries' references can name it. A
 * conditional create whose search found a resource when the transaction resolved its entries
 * carries that `match` (and its id): it answers with it and writes nothing.
 */
export interface PostEntry {
  readonly method: 'POST';
  readonly resourceType: string;
  readonly resource: FhirResource;
  readonly id: string;
  readonly ifNoneExist?: SearchCondition;
  readonly match?: FhirResource;
}

export interface PutEntry {
  readonly method: 'PUT';
  readonly resourceType: string;
  readonly id: string;
  readonly resource: FhirResource;
  readonly ifMatch?: string;
}

/** `PUT Type?search`, until its search names the resource it writes (a PutEntry then). */
export interface ConditionalPutEntry {
  readonly method: 'PUT';
  readonly resourceType: string;
  readonly condition: SearchCondition;
  readonly resource: FhirResource;
  readonly ifMatch?: string;
}

/** JSON Patch, which a Binary carries in a Bundle. */
export interface PatchEntry {
  readonly method: 'PATCH';
  readonly resourceType: string;
  readonly id: string;
  readonly patch: readonly Operation[];
  readonly ifMatch?: string;
}

export interface DeleteEntry {
  readonly method: 'DELETE';
  readonly resourceType: string;
  readonly id: string;
  readonly ifMatch?: string;
}

/** `DELETE Type?search`, until its search names the resource it deletes (a DeleteEntry then). */
export interface ConditionalDeleteEntry {
  readonly method: 'DELETE';
  readonly resourceType: string;
  readonly condition: SearchCondition;
}

/** A read or a search; a read may be conditional (`ifNoneMatch`, `ifModifiedSince`). */
export interface GetEntry {
  readonly method: 'GET';
  readonly url: string;
  readonly conditions: ReadConditions;
}

export type ParsedEntry =
  | PostEntry
  | PutEntry
  | ConditionalPutEntry
  | PatchEntry
  | DeleteEntry
  | ConditionalDeleteEntry
  | GetEntry;

/** An entry that writes one resource it names by id. */
export type WriteEntry = PostEntry | PutEntry | PatchEntry | DeleteEntry;

export function isConditional(
  entry: ParsedEntry,
): entry is ConditionalPutEntry | ConditionalDeleteEntry {
  return 'condition' in entry;
}

export function parseEntry(entry: BundleEntry, limits: SearchLimits): ParsedEntry {
  const method = entry?.request?.method;
  const url = entry?.request?.url?.replace(/^\//, '');
  if (typeof method !== 'string' || typeof url !== 'string')
    throw fhirError(400, 'required', 'request.method and request.url are required', 'request');
  if (method === 'GET') return { method, url, conditions: readConditions(entry, url) };
  const queryAt = url.indexOf('?');
  const path = queryAt < 0 ? url : url.slice(0, queryAt);
  const query = queryAt < 0 ? undefined : url.slice(queryAt + 1);
  const [resourceType, id, ...rest] = path.split('/');
  knownEntryType(resourceType);
  if (rest.length > 0 || (query !== undefined && id !== undefined))
    throw fhirError(
      400,
      'invalid',
      `request.url ${url} is neither Type/id nor Type?search`,
      'request.url',
    );
  const ifMatch = entry.request?.ifMatch;
  if (query !== undefined && method !== 'PUT' && method !== 'DELETE')
    throw fhirError(
      400,
      'not-supported',
      `Conditional ${method} (${url}) is not supported; ${method === 'POST' ? 'use request.ifNoneExist' : 'name the resource by id'}`,
      'request.url',
    );
  if (method === 'DELETE') {
    if (query === undefined) return { method, resourceType, id: required(id, 'DELETE'), ifMatch };
    return {
      method,
      resourceType,
      condition: parseCondition(resourceType, query, limits, CONDITIONAL_DELETE),
    };
  }
  if (method === 'PATCH')
    return {
      method,
      resourceType,
      id: required(id, 'PATCH'),
      patch: jsonPatchFromBinary(entry.resource),
      ifMatch,
    };
  const resource = entry.resource;
  if (!resource || typeof resource !== 'object')
    throw fhirError(400, 'required', `${method} needs a resource`, 'resource');
  if (resource.resourceType !== resourceType)
    throw fhirError(
      400,
      'invalid',
      `The resource is a ${String(resource.resourceType)}, but request.url names ${resourceType}`,
      'resource.resourceType',
    );
  if (method === 'POST') {
    if (id !== undefined)
      throw fhirError(400, 'invalid', 'POST request.url names a type, not an id', 'request.url');
    const ifNoneExist = entry.request?.ifNoneExist;
    if (ifNoneExist !== undefined && typeof ifNoneExist !== 'string')
      throw fhirError(
        400,
        'invalid',
        'request.ifNoneExist must be a string',
        'request.ifNoneExist',
      );
    return {
      method,
      resourceType,
      resource,
      id: randomUUID(),
      ...(ifNoneExist
        ? { ifNoneExist: parseCondition(resourceType, ifNoneExist, limits, 'If-None-Exist') }
        : {}),
    };
  }
  if (method === 'PUT') {
    if (query === undefined)
      return { method, resourceType, id: required(id, 'PUT'), resource, ifMatch };
    return {
      method,
      resourceType,
      condition: parseCondition(resourceType, query, limits, CONDITIONAL_UPDATE),
      resource,
      ifMatch,
    };
  }
  throw fhirError(
    400,
    'not-supported',
    `request.method ${method} is not supported (GET, POST, PUT, PATCH, DELETE are)`,
    'request.method',
  );
}

/** Every entry is checked against the token's scopes before anything is written. */
export function authorizeEntry(
  entry: ParsedEntry,
  authorize: (resourceType: string, interaction: Interaction) => void,
): ParsedEntry {
  switch (entry.method) {
    case 'POST':
      authorize(entry.resourceType, 'c');
      if (entry.ifNoneExist) authorize(entry.resourceType, 's');
      break;
    case 'PUT':
    case 'PATCH':
      authorize(entry.resourceType, 'u');
      break;
    case 'DELETE':
      authorize(entry.resourceType, 'd');
      break;
    case 'GET': {
      const [resourceType, id] = entry.url.split('?', 1)[0].split('/');
      authorize(resourceType, id === undefined ? 's' : 'r');
      break;
    }
  }
  if (isConditional(entry)) authorize(entry.resourceType, 's');
  return entry;
}

function required(id: string | undefined, method: string): string {
  if (!id) throw fhirError(400, 'invalid', `${method} request.url must be Type/id`, 'request.url');
  return id;
}

/** Each entry's fullUrl (`urn:uuid:…`, or an absolute URL) → the reference it becomes: `Type/id`. */
export function referenceMap(
  entries: readonly BundleEntry[],
  parsed: readonly ParsedEntry[],
): Map<string, string> {
  const map = new Map<string, string>();
  parsed.forEach((entry, index) => {
    const fullUrl = entries[index].fullUrl;
    if (fullUrl && 'id' in entry && entry.method !== 'DELETE')
      map.set(fullUrl, `${entry.resourceType}/${entry.id}`);
  });
  return map;
}

/**
 * Rewrites every reference in the entries' resources, and in the values their patches write,
 * that names another entry's fullUrl: a `reference` element, or a patch's value for a path
 * ending in `/reference`.
 */
export function rewriteReferences(parsed: ParsedEntry[], map: ReadonlyMap<string, string>): void {
  if (map.size === 0) return;
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        key === 'reference' && typeof item === 'string' && map.has(item)
          ? map.get(item)
          : rewrite(item),
      ]),
    );
  };
  const rewriteOperation = (operation: Operation): Operation => {
    if (!('value' in operation)) return operation;
    const { path, value } = operation;
    const target = path.endsWith('/reference') && typeof value === 'string' && map.get(value);
    return { ...operation, value: target || rewrite(value) };
  };
  parsed.forEach((entry, index) => {
    if ('resource' in entry)
      parsed[index] = { ...entry, resource: rewrite(entry.resource) as FhirResource };
    else if (entry.method === 'PATCH')
      parsed[index] = { ...entry, patch: entry.patch.map(rewriteOperation) };
  });
}

export function toOperation(
  entry: PostEntry | PutEntry | DeleteEntry,
  author: WriteAuthor | undefined,
): WriteOperation {
  switch (entry.method) {
    case 'POST':
      return { kind: 'create', resource: entry.resource, id: entry.id, author };
    case 'PUT':
      return {
        kind: 'update',
        resourceType: entry.resourceType,
        id: entry.id,
        resource: entry.resource,
        ifMatch: entry.ifMatch,
        author,
      };
    case 'DELETE':
      return {
        kind: 'delete',
        resourceType: entry.resourceType,
        id: entry.id,
        ifMatch: entry.ifMatch,
      };
  }
}

/** 400 unless `resourceType` is one this server knows. */
export function knownEntryType(resourceType: string): string {
  if (!searchableTypes.has(resourceType)) {
    throw fhirError(
      400,
      'invalid',
      `request.url names the unknown resource type ${resourceType}`,
      'request.url',
    );
  }
  return resourceType;
}

/** A GET entry's `ifNoneMatch` and `ifModifiedSince`: for reads by id; a search has no version. */
function readConditions(entry: BundleEntry, url: string): ReadConditions {
  const { ifNoneMatch, ifModifiedSince } = entry.request ?? {};
  if (ifNoneMatch === undefined && ifModifiedSince === undefined) return {};
  const path = url.split('?', 1)[0];
  if (url.includes('?') || path.split('/').length < 2) {
    throw fhirError(
      400,
      'invalid',
      `request.ifNoneMatch and request.ifModifiedSince apply to reads (Type/id), not to ${url}`,
      'request',
    );
  }
  for (const [name, value] of Object.entries({ ifNoneMatch, ifModifiedSince })) {
    if (value !== undefined && typeof value !== 'string')
      throw fhirError(400, 'invalid', `request.${name} must be a string`, `request.${name}`);
  }
  return {
    ...(ifNoneMatch === undefined ? {} : { ifNoneMatch }),
    ...(ifModifiedSince === undefined ? {} : { ifModifiedSince }),
  };
}
