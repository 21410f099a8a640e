/**
 * Reading what a reference points to, without fetching anything: the `Type/id` at the end of a
 * relative or absolute reference, and the type of a contained resource for `#id`.
 *
 * @see http://hl7.org/fhir/R4/references.html#literal
 */
import { loadDefinitionRegistry } from '../../generated/definitions/index.js';

export interface ParsedReference {
  /** Set when the reference ends in `Type/id` (optionally `/_history/n`) with a known type. */
  readonly targetType: string | null;
  readonly targetId: string | null;
  /** The reference as written unless relative: `http…`, `urn:uuid:…`, `#id`, or unreadable. */
  readonly url: string | null;
}

/** `[base/]Type/id[/_history/version]`, after FHIR's reference regex (references.html#regex). */
const TYPE_AND_ID =
  /(?:^|\/)([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/[A-Za-z0-9\-.]{1,64})?$/;
const ABSOLUTE = /^https?:\/\//;

let resourceTypes: ReadonlySet<string> | undefined;

function isResourceType(name: string): boolean {
  resourceTypes ??= new Set(loadDefinitionRegistry().resourceTypes);
  return resourceTypes.has(name);
}

/** Splits a Reference.reference; relative `Type/id` keeps no url, absolute URLs keep both. */
export function parseReference(reference: string): ParsedReference {
  const match = TYPE_AND_ID.exec(reference);
  const typed = match !== null && isResourceType(match[1]);
  const relative = typed && match.index === 0;
  if (typed && (relative || ABSOLUTE.test(reference))) {
    return { targetType: match[1], targetId: match[2], url: relative ? null : reference };
  }
  return { targetType: null, targetId: null, url: reference };
}

/**
 * The resource type a Reference (or a reference string) points to, as `resolve() is T` would
 * see it: from the `Type/id` it ends in, or from the contained resource a `#id` names.
 * `root` is the resource holding the reference (where `contained` is).
 */
export function referenceTargetType(value: unknown, root: unknown): string | undefined {
  const reference = isObject(value) ? value.reference : value;
  if (typeof reference !== 'string') return undefined;
  if (reference.startsWith('#')) return containedType(root, reference.slice(1));
  const match = TYPE_AND_ID.exec(reference);
  return match && isResourceType(match[1]) ? match[1] : undefined;
}

function containedType(root: unknown, id: string): string | undefined {
  const contained = isObject(root) ? root.contained : undefined;
  if (!Array.isArray(contained)) return undefined;
  for (const resource of contained) {
    if (isObject(resource) && resource.id === id && typeof resource.resourceType === 'string') {
      return resource.resourceType;
    }
  }
  return undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
