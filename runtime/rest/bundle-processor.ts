/**
 * `POST [base]` with a transaction Bundle (all entries or none, conditional entries resolved
 * first, `urn:uuid:` references rewritten to the new ids) or a batch Bundle (each entry on its
 * own).
 * @see http://hl7.org/fhir/R4/http.html#transaction
 */
import type { FhirResource } from '../model/fhir-resource.js';
import { toFhirError, FhirError, fhirError, informational } from '../model/fhir-error.js';
import type { Queryable, Transaction } from '../store/database.js';
import { WriteOperationError, type ResourceStore } from '../store/resource-store.js';
import type { WriteAuthor, WriteOperation, WriteResult } from '../store/write-operation.js';
import { searchResources } from '../store/search-store.js';
import type { Interaction } from '../access/scopes.js';
import {
  authorizeEntry,
  isConditional,
  knownEntryType,
  parseEntry,
  referenceMap,
  rewriteReferences,
  toOperation,
  type BundleEntry,
  type GetEntry,
  type ParsedEntry,
  type PostEntry,
} from './bundle-entry.js';
import { answerWith, conditionalCreate } from './conditional-create.js';
import { clientCopyIsCurrent, versionOf } from './conditional-read.js';
import { conditionalDelete } from './conditional-delete.js';
import { conditionalUpdate } from './conditional-update.js';
import { patchedUpdate, patchResource } from './patch-resource.js';
import type { SearchCondition } from './search-condition.js';
import { assertConditionsHold, assertNoOverlap } from './transaction-overlap.js';
import {
  conditionOf,
  isResolvable,
  lockEntryConditions,
  resolveConditional,
} from './transaction-targets.js';
import { searchBundle } from './search-bundle.js';
import { parseSearchRequest, type SearchLimits } from './search-request.js';

export interface BundleContext {
  readonly store: ResourceStore;
  readonly projectId: string;
  readonly base: string;
  readonly limits: SearchLimits;
  /** Throws (403) unless the caller may do `interaction` on `resourceType`. */
  readonly authorize: (resourceType: string, interaction: Interaction) => void;
  readonly mayRead: (resourceType: string) => boolean;
  /** Who writes (a Subscription keeps its author). */
  readonly author: WriteAuthor;
}

export async function processBundle(body: unknown, context: BundleContext): Promise<FhirResource> {
  const bundle = body as { resourceType?: unknown; type?: unknown; entry?: unknown };
  if (bundle?.resourceType !== 'Bundle')
    throw fhirError(
      400,
      'invalid',
      `POST ${context.base} takes a Bundle, not ${String(bundle?.resourceType ?? 'missing')}`,
      'resourceType',
    );
  if (bundle.type !== 'transaction' && bundle.type !== 'batch') {
    throw fhirError(
      400,
      'invalid',
      `Bundle.type must be transaction or batch, not ${String(bundle.type ?? 'missing')}`,
      'Bundle.type',
    );
  }
  if (bundle.entry !== undefined && !Array.isArray(bundle.entry))
    throw fhirError(400, 'structure', 'Bundle.entry must be an array', 'Bundle.entry');
  const entries = (bundle.entry ?? []) as BundleEntry[];
  return bundle.type === 'transaction' ? transaction(entries, context) : batch(entries, context);
}

async function transaction(
  entries: readonly BundleEntry[],
  context: BundleContext,
): Promise<FhirResource> {
  const parsed = entries.map((entry, index) =>
    atEntry(index, () => authorizeEntry(parseEntry(entry, context.limits), context.authorize)),
  );
  const requested: readonly ParsedEntry[] = [...parsed];
  const responses = await context.store.db.transaction(async (tx) => {
    const results = new Map<number, object>();
    await lockEntryConditions(tx, context.projectId, parsed);
    for (const [index, entry] of parsed.entries()) {
      if (!isResolvable(entry)) continue;
      const resolved = await atEntry(index, () =>
        resolveConditional(entry, context.store, context.projectId, tx),
      );
      if (resolved === undefined)
        results.set(index, nothingDeleted(entry.resourceType, conditionOf(entry)));
      else parsed[index] = resolved;
      if (resolved?.method === 'POST' && resolved.match)
        results.set(index, writeResponse(answerWith(resolved.match), context.base));
    }
    assertNoOverlap(entries, requested, parsed);
    rewriteReferences(parsed, referenceMap(entries, parsed));
    const writers = new Map<string, number>();
    // FHIR's order: deletes, creates, updates and patches, then reads. @see http://hl7.org/fhir/R4/http.html#trules
    for (const methods of [['DELETE'], ['POST'], ['PUT', 'PATCH']]) {
      const indexes = parsed.flatMap((entry, index) =>
        methods.includes(entry.method) && !results.has(index) ? [index] : [],
      );
      const written = await writeEntries(indexes, parsed, context, tx);
      for (const [index, result] of written) {
        results.set(index, writeResponse(result, context.base));
        const reference = `${result.resourceType}/${result.id}`;
        if (!writers.has(reference)) writers.set(reference, index);
      }
    }
    const source = context.store.searchSource(tx);
    await assertConditionsHold(source, context.projectId, entries, requested, writers);
    for (const [index, entry] of parsed.entries()) {
      if (entry.method === 'GET')
        results.set(index, await atEntry(index, () => readEntry(entry, context, tx)));
    }
    return parsed.map((_, index) => results.get(index)!);
  });
  return { resourceType: 'Bundle', type: 'transaction-response', entry: responses };
}

/**
 * Writes the entries at `indexes` (conditional entries already resolved; conditional creates that
 * found a resource are answered, not written): conditional creates one by one (each sees the ones
 * before it, so that two of one condition make one resource), then the others in one store write,
 * patches read and patched first. A conditional create that found an earlier entry's resource did
 * not take the id the other entries' references were rewritten to: they are pointed at that
 * resource before they are written.
 */
async function writeEntries(
  indexes: readonly number[],
  parsed: ParsedEntry[],
  context: BundleContext,
  tx: Transaction,
): Promise<[number, WriteResult][]> {
  const conditional = (i: number) => parsed[i].method === 'POST' && Boolean(parsed[i].ifNoneExist);
  const results: [number, WriteResult][] = [];
  const matched = new Map<string, string>();
  for (const index of indexes.filter(conditional)) {
    const post = parsed[index] as PostEntry;
    const result = await atEntry(index, () =>
      conditionalCreate(
        context.store,
        context.projectId,
        { ...post.resource, id: undefined } as FhirResource,
        post.ifNoneExist!,
        tx,
        post.id,
        context.author,
      ),
    );
    if (result.id !== post.id)
      matched.set(`${post.resourceType}/${post.id}`, `${result.resourceType}/${result.id}`);
    results.push([index, result]);
  }
  rewriteReferences(parsed, matched);
  const plain = indexes.filter((i) => !conditional(i));
  if (plain.length > 0) {
    const operations: WriteOperation[] = [];
    for (const index of plain)
      operations.push(await atEntry(index, () => operationOf(parsed[index], context, tx)));
    const written = await atEntries(plain, () =>
      context.store.write(context.projectId, operations, tx),
    );
    written.forEach((result, i) => results.push([plain[i], result]));
  }
  return results;
}

/** The store write of a resolved entry; a patch's, from the resource as it is now in `tx`. */
async function operationOf(
  entry: ParsedEntry,
  context: BundleContext,
  tx: Transaction,
): Promise<WriteOperation> {
  if (entry.method === 'PATCH')
    return patchedUpdate(
      context.store,
      context.projectId,
      { ...entry, author: context.author },
      tx,
    );
  if (entry.method === 'GET' || isConditional(entry))
    throw new Error(`${entry.method} entries are not written as they are`);
  return toOperation(entry, context.author);
}

async function batch(
  entries: readonly BundleEntry[],
  context: BundleContext,
): Promise<FhirResource> {
  const responses = [];
  for (const [index, entry] of entries.entries()) {
    try {
      const parsed = atEntry(index, () =>
        authorizeEntry(parseEntry(entry, context.limits), context.authorize),
      );
      responses.push(await batchEntry(parsed, context));
    } catch (thrown) {
      const error = toFhirError(thrown);
      responses.push({ response: { status: String(error.status), outcome: error.outcome } });
    }
  }
  return { resourceType: 'Bundle', type: 'batch-response', entry: responses };
}

/** One batch entry, in a transaction of its own. */
async function batchEntry(entry: ParsedEntry, context: BundleContext): Promise<object> {
  const { store, projectId, base, author } = context;
  switch (entry.method) {
    case 'GET':
      return readEntry(entry, context, store.db);
    case 'POST':
      if (entry.ifNoneExist)
        return writeResponse(
          await conditionalCreate(
            store,
            projectId,
            entry.resource,
            entry.ifNoneExist,
            undefined,
            undefined,
            author,
          ),
          base,
        );
      break;
    case 'PATCH':
      return writeResponse(await patchResource(store, projectId, { ...entry, author }), base);
    case 'PUT':
      if (isConditional(entry))
        return writeResponse(
          await conditionalUpdate(
            store,
            projectId,
            entry.resource,
            entry.condition,
            entry.ifMatch,
            author,
          ),
          base,
        );
      break;
    case 'DELETE':
      if (isConditional(entry)) {
        const result = await conditionalDelete(store, projectId, entry.condition);
        return result
          ? writeResponse(result, base)
          : nothingDeleted(entry.resourceType, entry.condition);
      }
      break;
  }
  const [result] = await store.write(projectId, [toOperation(entry, author)]);
  return writeResponse(result, base);
}

/** The answer to a conditional delete that matched nothing: it succeeds, deleting nothing. */
function nothingDeleted(resourceType: string, condition: SearchCondition): object {
  return {
    response: {
      status: '200 OK',
      outcome: informational(`No ${resourceType} matched ${condition.text}: nothing was deleted`),
    },
  };
}

function writeResponse(result: WriteResult, base: string): object {
  const location = `${result.resourceType}/${result.id}/_history/${result.versionId}`;
  return {
    fullUrl: `${base}/${result.resourceType}/${result.id}`,
    ...(result.resource ? { resource: result.resource } : {}),
    response: {
      status: result.status === 201 ? '201 Created' : '200 OK',
      location,
      etag: `W/"${result.versionId}"`,
      lastModified: result.lastUpdated,
    },
  };
}

/**
 * A GET entry: a read (`Type/id`, with its version's etag and last update; 304 and no resource
 * when its conditions say the client's copy is current) or a search (`Type?…`).
 */
async function readEntry(
  { url, conditions }: GetEntry,
  context: BundleContext,
  db: Queryable,
): Promise<object> {
  const [path, query = ''] = url.split('?', 2);
  const [resourceType, id] = path.split('/');
  knownEntryType(resourceType);
  if (id !== undefined) {
    const resource = await context.store.read(context.projectId, resourceType, id, db);
    const { versionId, lastUpdated } = versionOf(resource);
    const response = {
      ...(versionId === undefined ? {} : { etag: `W/"${versionId}"` }),
      ...(lastUpdated === undefined ? {} : { lastModified: lastUpdated }),
    };
    return clientCopyIsCurrent(conditions, resource)
      ? { response: { status: '304 Not Modified', ...response } }
      : { resource, response: { status: '200 OK', ...response } };
  }
  const request = parseSearchRequest(resourceType, new URLSearchParams(query), context.limits);
  const found = await searchResources(
    context.store.searchSource(db),
    context.projectId,
    resourceType,
    request,
  );
  // As in a REST search: included resources of types the token may not read are left out.
  const result = {
    ...found,
    included: found.included.filter((r) => context.mayRead(r.resourceType)),
  };
  const page = {
    url: new URL(`${context.base}/${url}`),
    count: request.count,
    offset: request.offset,
    elements: request.elements,
  };
  return { resource: searchBundle(context.base, result, page), response: { status: '200 OK' } };
}

/** Errors while handling an entry say which entry. */
function atEntry<T>(index: number, work: () => T): T {
  try {
    const result = work();
    if (result instanceof Promise)
      return result.catch((thrown) => Promise.reject(locate(thrown, [index]))) as T;
    return result;
  } catch (thrown) {
    throw locate(thrown, [index]);
  }
}

function atEntries<T>(indexes: readonly number[], work: () => Promise<T>): Promise<T> {
  return work().catch((thrown) => Promise.reject(locate(thrown, indexes)));
}

/**
 * A client error with the entry it is about in each issue's expression. Server-side failures go
 * on as they came, so that the error log can tell a database outage from a bug.
 */
function locate(thrown: unknown, indexes: readonly number[]): unknown {
  if (thrown instanceof WriteOperationError) return locate(thrown.reason, [indexes[thrown.index]]);
  const error = toFhirError(thrown);
  if (error.status >= 500) return thrown;
  const where = indexes.length === 1 ? `Bundle.entry[${indexes[0]}]` : 'Bundle.entry';
  return new FhirError(
    error.status,
    error.issues.map((issue) => ({
      ...issue,
      diagnostics: indexes.length === 1 ? `${where}: ${issue.diagnostics}` : issue.diagnostics,
      expression: (issue.expression ?? [])
        .map((e) => `${where}.${e}`)
        .concat(issue.expression?.length ? [] : [where]),
    })),
    error.headers,
  );
}
