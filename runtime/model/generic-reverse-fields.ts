/**
 * The fields every resource type has for reverse references through a parameter that may point
 * to any resource (Provenance's `target`, AuditEvent's `entity`), which get no typed field of their
 * own on every type: FHIR's form `ProvenanceList(_reference: target, agent: "…")` is rewritten to
 * `_reverseList(_type: Provenance, _reference: "target", _search: { agent: "…" })` before
 * validation. Shared by the generator, which declares them, and the runtime, which rewrites to
 * them.
 */
export const GENERIC_REVERSE_FIELDS = {
  List: '_reverseList',
  Connection: '_reverseConnection',
} as const;

/** The page type `_reverseConnection` answers, and its edges. */
export const GENERIC_REVERSE_TYPES = {
  connection: 'AnyResourceConnection',
  edge: 'AnyResourceConnectionEdge',
} as const;
