/**
 * The shape of the type definitions that `npm run generate` writes to generated/definitions/.
 * Hand-written because both generated code and the runtime (validation, search extraction)
 * rely on it; the values themselves come only from spec/.
 */

/** How a primitive is written in FHIR JSON (http://hl7.org/fhir/R4/json.html#primitive). */
export type JsonType = 'string' | 'number' | 'boolean';

export interface PrimitiveDefinition {
  readonly name: string;
  readonly jsonType: JsonType;
  /** HL7's regex for the value (unanchored, as in the spec); absent for xhtml and boolean. */
  readonly pattern?: string;
}

export type ElementKind = 'primitive' | 'complex' | 'resource';

export interface ElementDefinition {
  /** JSON property name, with choice types expanded: `birthDate`, `valueQuantity`. */
  readonly name: string;
  /** FHIR type name: a primitive (`dateTime`), a datatype (`HumanName`), a backbone (`PatientContact`), or `Resource`. */
  readonly type: string;
  /** `resource` means any resource (contained, Bundle.entry.resource), checked by its own resourceType. */
  readonly kind: ElementKind;
  readonly min: number;
  readonly array: boolean;
  /** For an expanded choice element (`value[x]` → `valueQuantity`): the group name, `value`. At most one member may be present. */
  readonly choiceGroup?: string;
  /** Resource types a Reference or canonical may point to; absent means any. */
  readonly targets?: readonly string[];
  /**
   * False for the few values typed with FHIRPath system types rather than FHIR primitives
   * (Resource.id, Element.id, Extension.url): they take no `_x` sibling.
   */
  readonly extensible?: false;
}

export type TypeKind = 'resource' | 'datatype' | 'backbone';

export interface TypeDefinition {
  readonly name: string;
  readonly kind: TypeKind;
  /** FHIR path of the type's root: `Patient`, `Patient.contact`, `HumanName`. */
  readonly path: string;
  /** In StructureDefinition order. */
  readonly elements: readonly ElementDefinition[];
}

/** Every type the server knows, by name. */
export interface DefinitionRegistry {
  readonly primitives: Readonly<Record<string, PrimitiveDefinition>>;
  readonly types: Readonly<Record<string, TypeDefinition>>;
  readonly resourceTypes: readonly string[];
}
