/**
 * The shape of generated/resolvers/: for every GraphQL field that needs more than reading a
 * property of its parent, the kind of runtime resolver that serves it. The runtime holds one
 * implementation per kind and no per-resource-type code.
 */
export type ResolverDescriptor =
  /** `Patient(id:)` */
  | { readonly kind: 'read'; readonly resourceType: string }
  /** `PatientList(…)` */
  | { readonly kind: 'search'; readonly resourceType: string }
  /** `PatientConnection(…)` */
  | { readonly kind: 'connection'; readonly resourceType: string }
  /** `PatientCreate(res:)` */
  | { readonly kind: 'create'; readonly resourceType: string }
  /** `PatientUpdate(id:, res:)` */
  | { readonly kind: 'update'; readonly resourceType: string }
  /** `PatientDelete(id:)` */
  | { readonly kind: 'delete'; readonly resourceType: string }
  /** `ConditionList(_reference: patient, …)` inside a resource: `resourceType` is the source, Condition. */
  | { readonly kind: 'reverseSearch'; readonly resourceType: string }
  /** `ConditionConnection(_reference: patient, …)` inside a resource. */
  | { readonly kind: 'reverseConnection'; readonly resourceType: string }
  /** `_reverseList(_type: Provenance, _reference: "target", _search: {…})` (generic-reverse-fields.ts). */
  | { readonly kind: 'genericReverseSearch' }
  /** `_reverseConnection(…)`, paged. */
  | { readonly kind: 'genericReverseConnection' }
  /** A repeating element with filter arguments: `name(use: official, _count: 1)`. */
  | { readonly kind: 'filterList' }
  /** `Reference.resource(optional:, type:)` */
  | { readonly kind: 'resolveReference' }
  /** `__resolveType` of a union of resources: the value's `resourceType`. */
  | { readonly kind: 'resourceTypeOf' };

export type ResolverKind = ResolverDescriptor['kind'];

/** Type name → field name (or `__resolveType`) → descriptor. */
export type ResolverWiring = Readonly<Record<string, Readonly<Record<string, ResolverDescriptor>>>>;
