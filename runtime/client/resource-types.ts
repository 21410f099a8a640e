/** The shapes MedplumClient's methods answer with, over Graphir's generated FHIR types. */
import type { Bundle, Resource, ResourceType } from '../../generated/types/index.js';

/** The resource interface of one resource type, e.g. `ResourceOf<'Patient'>` is `Patient`. */
export type ResourceOf<K extends ResourceType> = Extract<Resource, { resourceType: K }>;

/** A resource as the server answers it: with its id. */
export type WithId<T> = T & { id: string };

/** Search results as an array that also carries the Bundle they came in (links, total). */
export type ResourceArray<T extends Resource = Resource> = T[] & { bundle: Bundle };
