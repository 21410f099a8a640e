/**
 * The intermediate representation: plain readonly data built once from spec/ and read by every
 * emitter. Every FHIR rule the emitters need is decided here (choice expansion, backbone names,
 * contentReference, search argument names), so that no emitter reinterprets FHIR.
 * Lists are sorted by name unless they say otherwise.
 */
import type { JsonType } from '../../runtime/model/type-definition.js';
import type { SearchType } from '../../runtime/model/search-definition.js';

export interface SpecIR {
  readonly primitives: readonly PrimitiveIR[];
  /** Datatypes and their backbone types (`Timing`, `TimingRepeat`). */
  readonly datatypes: readonly ComplexTypeIR[];
  readonly resources: readonly ResourceIR[];
}

export interface PrimitiveIR {
  /** FHIR name: `dateTime`, `positiveInt`. */
  readonly name: string;
  readonly jsonType: JsonType;
  /** Whole numbers (integer, positiveInt, unsignedInt), as opposed to decimal. */
  readonly integer: boolean;
  readonly pattern?: string;
  readonly description: string;
  /** The spec/ files this primitive was built from, sorted. */
  readonly sources: readonly string[];
}

export type ElementKind = 'primitive' | 'complex' | 'resource';

export interface ElementIR {
  /** JSON property name; for choice types the expanded name (`valueQuantity`). */
  readonly name: string;
  /** FHIR path as the StructureDefinition writes it (`Observation.value[x]`). */
  readonly path: string;
  /** A primitive (`string`), a datatype (`Quantity`), a backbone type (`PatientContact`) or `Resource`. */
  readonly type: string;
  readonly kind: ElementKind;
  readonly min: number;
  readonly array: boolean;
  /** Set on every member of an expanded choice: `value` for `value[x]`. */
  readonly choiceGroup?: string;
  /** Resource types a Reference or canonical may point to, sorted; empty means any. */
  readonly targets: readonly string[];
  /** The spec's short definition. */
  readonly description: string;
  readonly summary: boolean;
  /**
   * Whether a primitive element has a `_x` sibling for its id and extensions. Not the values that
   * R4 types with FHIRPath system types: Resource.id, Element.id, Extension.url.
   * @see http://hl7.org/fhir/R4/json.html#primitive
   */
  readonly extensible: boolean;
}

export type ComplexKind = 'datatype' | 'backbone' | 'resource';

export interface ComplexTypeIR {
  /** Type name in GraphQL and TypeScript: `HumanName`, `PatientContact`, `Patient`. */
  readonly name: string;
  readonly kind: ComplexKind;
  /** FHIR path of the type's root: `Patient.contact`. */
  readonly path: string;
  /** The resource or datatype whose generated files hold this type. */
  readonly owner: string;
  readonly description: string;
  /** In StructureDefinition order. */
  readonly elements: readonly ElementIR[];
  /**
   * The children by whose value a repeating element of this type can be filtered
   * (`name(use: official)`, `extension(url: …)`, `identifier(system: …)`): the string-valued
   * primitive children other than `id`, without choice members, in element order.
   * @see http://hl7.org/fhir/R4/graphql.html#list
   */
  readonly filterBy: readonly string[];
  /** The spec/ files this type was built from, sorted. */
  readonly sources: readonly string[];
}

export interface ResourceIR extends ComplexTypeIR {
  readonly kind: 'resource';
  /** Backbone types declared inside this resource, in element order. */
  readonly backbones: readonly ComplexTypeIR[];
  /** Search parameters that apply to this type (its own and Resource's), sorted by code. */
  readonly searchParameters: readonly SearchParameterIR[];
  /** How each search argument name maps to a parameter, sorted by argument name. */
  readonly searchArguments: readonly SearchArgumentIR[];
  /**
   * Resource types its reference search parameters can point to, sorted by target: each gets this
   * type's reverse-reference fields (Condition's `ConditionList` on Patient).
   */
  readonly referenceTargets: readonly ReferenceTargetIR[];
}

export interface SearchParameterIR {
  /** FHIR code, kebab-case: `address-city`. */
  readonly code: string;
  /** GraphQL argument name: `address_city`. */
  readonly argument: string;
  readonly type: SearchType;
  /** FHIRPath for this resource type only (other bases of a shared parameter removed). */
  readonly expression: string;
  /** For reference parameters: resource types it may point to, sorted. */
  readonly targets: readonly string[];
  /** Modifiers offered as argument suffixes (`exact` → `name_exact`). */
  readonly modifiers: readonly string[];
  /** For composite parameters: the component parameters' codes and their relative expressions. */
  readonly components: readonly { readonly code: string; readonly expression: string }[];
  readonly description: string;
}

export interface SearchArgumentIR {
  /** GraphQL argument name: `name`, `name_exact`, `birthdate_missing`. */
  readonly name: string;
  readonly code: string;
  readonly modifier?: string;
}

export interface ReferenceTargetIR {
  /** A resource type the references can point to: `Patient` for Condition's `subject`. */
  readonly target: string;
  /** Codes of the reference parameters that can point to it, sorted. */
  readonly parameters: readonly string[];
}
