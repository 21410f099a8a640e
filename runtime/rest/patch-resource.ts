/**
 * `PATCH [base]/[type]/[id]` with JSON Patch: the current version read with its row locked,
 * patched, then written as an update (validated like every write), all in one transaction, so
 * that no other write of the resource comes between the read and the write. `If-Match` is
 * checked against the version read before the patch applies. A patch may not change what the
 * server owns: the id, the resourceType, meta.versionId.
 * @see http://hl7.org/fhir/R4/http.html#patch
 */
import type { Operation } from 'rfc6902';
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import type { Transaction } from '../store/database.js';
import type { ResourceStore } from '../store/resource-store.js';
import type { WriteAuthor, WriteOperation, WriteResult } from '../store/write-operation.js';
import { parseETag } from '../store/write-versions.js';
import { applyJsonPatch } from './json-patch.js';

export interface PatchRequest {
  readonly resourceType: string;
  readonly id: string;
  readonly patch: readonly Operation[];
  readonly ifMatch?: string;
  readonly author?: WriteAuthor;
}

/** Reads, patches and writes the resource in one transaction. */
export async function patchResource(
  store: ResourceStore,
  projectId: string,
  request: PatchRequest,
): Promise<WriteResult> {
  return store.db.transaction(async (tx) => {
    const [result] = await store.write(
      projectId,
      [await patchedUpdate(store, projectId, request, tx)],
      tx,
    );
    return result;
  });
}

/** The update a patch makes, read and patched in `tx` (which holds the row's lock until it ends). */
export async function patchedUpdate(
  store: ResourceStore,
  projectId: string,
  { resourceType, id, patch, ifMatch, author }: PatchRequest,
  tx: Transaction,
): Promise<WriteOperation> {
  const current = await store.readForUpdate(projectId, resourceType, id, tx);
  const versionId = versionOf(current);
  if (ifMatch !== undefined && parseETag(ifMatch) !== versionId)
    throw fhirError(
      412,
      'conflict',
      `If-Match ${ifMatch} does not match ${resourceType}/${id}, whose version is ${versionId}`,
    );
  const patched = applyJsonPatch(current, patch);
  for (const [element, before, after] of [
    ['id', current.id, patched.id],
    ['resourceType', current.resourceType, patched.resourceType],
    ['meta.versionId', versionId, versionOf(patched)],
  ])
    if (before !== after)
      throw fhirError(
        400,
        'invalid',
        `A patch may not change ${element} (${JSON.stringify(before)} → ${JSON.stringify(after) ?? 'removed'})`,
        `${resourceType}.${element}`,
      );
  return { kind: 'update', resourceType, id, resource: patched, ifMatch, author };
}

function versionOf(resource: FhirResource): unknown {
  return (resource.meta as { versionId?: unknown } | undefined)?.versionId;
}
