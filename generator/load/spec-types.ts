/**
 * The parts of FHIR's conformance resources that the generator reads.
 * @see http://hl7.org/fhir/R4/structuredefinition.html
 * @see http://hl7.org/fhir/R4/searchparameter.html
 */

export interface SpecExtension {
  readonly url: string;
  readonly valueUrl?: string;
  readonly valueString?: string;
  readonly valueBoolean?: boolean;
}

export interface SpecElementType {
  /** A type name (`HumanName`, `Reference`), or for primitive values a FHIRPath system type (`http://hl7.org/fhirpath/System.String`). */
  readonly code: string;
  readonly targetProfile?: readonly string[];
  readonly profile?: readonly string[];
  readonly extension?: readonly SpecExtension[];
}

export interface SpecElement {
  readonly id: string;
  readonly path: string;
  readonly short?: string;
  readonly definition?: string;
  readonly min?: number;
  readonly max?: string;
  readonly base?: { readonly path: string; readonly min: number; readonly max: string };
  readonly type?: readonly SpecElementType[];
  /** `#Questionnaire.item`: this element has the same children as the one referred to. */
  readonly contentReference?: string;
  readonly isSummary?: boolean;
  readonly isModifier?: boolean;
}

export interface StructureDefinition {
  readonly resourceType: 'StructureDefinition';
  readonly id: string;
  readonly url: string;
  readonly name: string;
  readonly type: string;
  readonly kind: 'primitive-type' | 'complex-type' | 'resource' | 'logical';
  readonly abstract: boolean;
  readonly baseDefinition?: string;
  readonly derivation?: 'specialization' | 'constraint';
  readonly description?: string;
  readonly snapshot?: { readonly element: readonly SpecElement[] };
  readonly differential?: { readonly element: readonly SpecElement[] };
}

export interface SearchParameter {
  readonly resourceType: 'SearchParameter';
  readonly id: string;
  readonly url: string;
  readonly code: string;
  readonly base: readonly string[];
  readonly type: string;
  readonly description?: string;
  readonly expression?: string;
  readonly target?: readonly string[];
  readonly component?: readonly { readonly definition: string; readonly expression: string }[];
}

/** Everything in spec/ that the generator uses, in file order. */
export interface Spec {
  readonly structureDefinitions: readonly StructureDefinition[];
  readonly searchParameters: readonly SearchParameter[];
  /** The file each definition came from, relative to the working directory, `/`-separated (`spec/hl7-r4/profiles-types.json`). */
  readonly files: ReadonlyMap<StructureDefinition | SearchParameter, string>;
}
