/**
 * `#id` references: a Reference whose `reference` is `#newborn` points to the resource with id
 * `newborn` in `contained` of the resource that holds the Reference (`#` alone is that resource).
 * @see http://hl7.org/fhir/R4/references.html#contained
 *
 * A resolver sees only its parent value (the Reference), not the resource around it. So every
 * object value that the executor hands down is remembered with its enclosing resource: the
 * default field resolver (plain properties), filterList (repeating elements) and
 * Reference.resource (a contained target keeps its container, so that contained resources can
 * refer to each other). Resources are their own enclosing resource, except those under
 * `contained`. A WeakMap keyed by the values themselves is right across requests too: an object
 * inside a resource's JSON always belongs to that resource.
 */
import { defaultFieldResolver, type GraphQLFieldResolver } from 'graphql';

type Resource = { readonly resourceType: string; readonly id?: string } & Record<string, unknown>;

const enclosing = new WeakMap<object, Resource>();

/** The resource that holds `value`, or the value itself when it is a resource of its own. */
export function enclosingResource(value: unknown): Resource | undefined {
  if (!isObject(value)) return undefined;
  return enclosing.get(value) ?? (isResource(value) ? value : undefined);
}

/** Records that `child` (an object, or a list of them) was read from `parent` by `fieldName`. */
export function rememberContainer(child: unknown, parent: unknown, fieldName: string): void {
  if (!isObject(child)) return;
  const container = enclosingResource(parent);
  if (!container) return;
  for (const item of Array.isArray(child) ? child : [child]) {
    // A resource is its own container, unless it is contained (Bundle.entry.resource is not).
    if (!isObject(item) || (isResource(item) && fieldName !== 'contained')) continue;
    enclosing.set(item, container);
  }
}

/** The contained resource that `#id` in `reference` (a Reference object) points to. */
export function resolveContained(reference: object, target: string): Resource | undefined {
  const container = enclosingResource(reference);
  if (!container) return undefined;
  if (target === '#') return container;
  const id = target.slice(1);
  const contained = Array.isArray(container.contained) ? container.contained : [];
  const found = contained.find((r): r is Resource => isResource(r) && r.id === id);
  if (found) enclosing.set(found, container);
  return found;
}

/** The executor's default field resolver, remembering where every object value came from. */
export const containerTrackingResolver: GraphQLFieldResolver<unknown, unknown> = (
  source,
  args,
  context,
  info,
) => {
  const value = defaultFieldResolver(source, args, context, info);
  rememberContainer(value, source, info.fieldName);
  return value;
};

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function isResource(value: unknown): value is Resource {
  return isObject(value) && typeof (value as { resourceType?: unknown }).resourceType === 'string';
}
