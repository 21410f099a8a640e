/**
 * What a Subscription's jobs carry about the write that triggered them, and the version they
 * match and deliver: the one written, or for a delete the last version before it.
 */
import type { FhirResource } from '../model/fhir-resource.js';
import type { ResourceStore } from '../store/resource-store.js';
import type { Interaction } from './subscription-channel.js';

export interface WrittenResource {
  readonly projectId: string;
  readonly resourceType: string;
  readonly id: string;
  /** The version the write made (for a delete, the deletion). */
  readonly versionId: string;
  readonly interaction: Interaction;
  /** When the write enqueued its matching: the start of the write-to-delivery latency. */
  readonly writtenAt: string;
}

/** The key that keeps one resource's jobs in write order: projects may share ids. */
export function resourceKey(written: WrittenResource): string {
  return `${written.projectId}/${written.resourceType}/${written.id}`;
}

/** The version matched and delivered: for a delete, the one it deleted. */
export async function deliveredVersion(
  store: ResourceStore,
  written: WrittenResource,
): Promise<FhirResource> {
  const { projectId, resourceType, id, versionId, interaction } = written;
  const version = interaction === 'delete' ? String(Number(versionId) - 1) : versionId;
  const [stored] = await store.history(projectId, resourceType, id, version);
  if (!stored.resource)
    throw new Error(`${resourceType}/${id} version ${version} has no content to deliver`);
  return stored.resource;
}
