/**
 * One Bundle entry: its request read into a typed operation, checked against the token's
 * scopes, and turned into a store write; and the `urn:uuid:` references between entries.
 * @see http://hl7.org/fhir/R4/bundle.html#references
 */
import { randomUUID } from 'node:crypto';
import { searchableTypes } from '../../generated/search/index.js';
import type { Interaction } from '../access/scopes.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import type { WriteOperation } from '../store/write-operation.js';

export interface BundleEntry {
  readonly fullUrl?: string;
  readonly resource?: FhirResource;
  readonly request?: {
    readonly method?: string;
    readonly url?: string;
    readonly ifMatch?: string;
    readonly ifNoneExist?: string;
  };
}

export type ParsedEntry =
  | {
      readonly method: 'POST';
      readonly resourceType: string;
      readonly resource: FhirResource;
      readonly id: string;
      readonly ifNoneExist?: string;
    }
  | {
      readonly method: 'PUT';
      readonly resourceType: string;
      readonly id: string;
      readonly resource: FhirResource;
      readonly ifMatch?: string;
    }
  | {
      readonly method: 'DELETE';
      readonly resourceType: string;
      readonly id: string;
      readonly ifMatch?: string;
    }
  | { readonly method: 'GET'; readonly url: string };

export function parseEntry(entry: BundleEntry): ParsedEntry {
  const method = entry?.request?.method;
  const url = entry?.request?.url;
  if (typeof method !== 'string' || typeof url !== 'string')
    throw fhirError(400, 'required', 'request.method and request.url are required', 'request');
  const [path, query] = url.replace(/^\//, '').split('?', 2);
  const [resourceType, id, ...rest] = path.split('/');
  if (method === 'GET') return { method, url: url.replace(/^\//, '') };
  knownEntryType(resourceType);
  if (query !== undefined || rest.length > 0)
    throw fhirError(
      400,
      'not-supported',
      `Conditional ${method} (${url}) is not supported; name the resource by id`,
      'request.url',
    );
  if (method === 'DELETE')
    return { method, resourceType, id: required(id, 'DELETE'), ifMatch: entry.request?.ifMatch };
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
    return {
      method,
      resourceType,
      resource,
      id: randomUUID(),
      ifNoneExist: entry.request?.ifNoneExist,
    };
  }
  if (method === 'PUT')
    return {
      method,
      resourceType,
      id: required(id, 'PUT'),
      resource,
      ifMatch: entry.request?.ifMatch,
    };
  throw fhirError(
    400,
    'not-supported',
    `request.method ${method} is not supported (GET, POST, PUT, DELETE are)`,
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
    if (fullUrl && entry.method !== 'GET' && entry.method !== 'DELETE')
      map.set(fullUrl, `${entry.resourceType}/${entry.id}`);
  });
  return map;
}

/** Rewrites every `reference` in the entries' resources that names another entry's fullUrl. */
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
  parsed.forEach((entry, index) => {
    if ('resource' in entry)
      parsed[index] = { ...entry, resource: rewrite(entry.resource) as FhirResource };
  });
}

export function toOperation(entry: ParsedEntry): WriteOperation {
  switch (entry.method) {
    case 'POST':
      return { kind: 'create', resource: entry.resource, id: entry.id };
    case 'PUT':
      return {
        kind: 'update',
        resourceType: entry.resourceType,
        id: entry.id,
        resource: entry.resource,
        ifMatch: entry.ifMatch,
      };
    case 'DELETE':
      return {
        kind: 'delete',
        resourceType: entry.resourceType,
        id: entry.id,
        ifMatch: entry.ifMatch,
      };
    case 'GET':
      throw new Error('GET entries are reads, not writes');
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
