/**
 * Turns one StructureDefinition's snapshot into a complex type and the backbone types nested in
 * it. Choice elements are expanded, backbone elements become named types, and
 * `contentReference` elements reuse the type of the element they point to.
 * @see http://hl7.org/fhir/R4/elementdefinition.html
 * @see http://hl7.org/fhir/R4/formats.html#choice
 */
import type { SpecElement, SpecElementType } from '../load/spec-types.js';
import type { ComplexKind, ComplexTypeIR, ElementIR, ElementKind } from './ir-types.js';
import {
  backboneTypeName,
  choiceElementName,
  choiceGroupName,
  isChoicePath,
  lastSegment,
  parentPath,
  sortedBy,
  typeNameFromUrl,
} from './naming.js';

const SYSTEM_TYPE_PREFIX = 'http://hl7.org/fhirpath/System.';
const RESOURCE_ID_TYPE = 'id';
const FHIR_TYPE_EXTENSION = 'http://hl7.org/fhir/StructureDefinition/structuredefinition-fhir-type';
/** FHIRPath system types used for primitive values, by the FHIR primitive they stand for. */
const SYSTEM_TYPES: Readonly<Record<string, string>> = {
  Boolean: 'boolean',
  Date: 'date',
  DateTime: 'dateTime',
  Decimal: 'decimal',
  Integer: 'integer',
  String: 'string',
  Time: 'time',
};

/** What the element builder needs to know about the rest of the spec. */
export interface TypeUniverse {
  isPrimitive(name: string): boolean;
  /** Primitives written as JSON strings (code, uri, string…). */
  isStringPrimitive(name: string): boolean;
  isResource(name: string): boolean;
}

export interface BuiltTypes {
  readonly root: ComplexTypeIR;
  /** Backbone types below the root, in element order. */
  readonly backbones: readonly ComplexTypeIR[];
}

/**
 * Builds the type `name` from `elements` (a snapshot). The root element's path may differ from the
 * name: constraint datatypes such as `Age` have `Quantity.*` paths.
 */
export function buildComplexTypes(
  name: string,
  kind: ComplexKind,
  elements: readonly SpecElement[],
  universe: TypeUniverse,
  sources: readonly string[],
): BuiltTypes {
  const rootPath = elements[0].path;
  const children = groupByParent(elements);
  const backbones: ComplexTypeIR[] = [];
  const backboneNames = new Map<string, string>();
  for (const element of elements.slice(1)) {
    if (children.has(element.path)) backboneNames.set(element.path, backboneTypeName(element.path));
  }
  const context: BuildContext = { universe, children, backboneNames, name, kind, rootPath };

  const build = (
    path: string,
    typeName: string,
    typeKind: ComplexKind,
    root: SpecElement,
  ): ComplexTypeIR => {
    const typeElements = (children.get(path) ?? []).flatMap((child) =>
      buildElements(child, context),
    );
    return {
      name: typeName,
      kind: typeKind,
      path,
      owner: name,
      description: root.short ?? root.definition ?? '',
      elements: typeElements,
      filterBy: typeElements
        .filter((e) => e.name !== 'id' && !e.choiceGroup && universe.isStringPrimitive(e.type))
        .map((e) => e.name),
      sources,
    };
  };

  for (const element of elements.slice(1)) {
    const backboneName = backboneNames.get(element.path);
    if (backboneName) backbones.push(build(element.path, backboneName, 'backbone', element));
  }
  return { root: build(rootPath, name, kind, elements[0]), backbones };
}

interface BuildContext {
  readonly universe: TypeUniverse;
  readonly children: ReadonlyMap<string, readonly SpecElement[]>;
  readonly backboneNames: ReadonlyMap<string, string>;
  readonly name: string;
  readonly kind: ComplexKind;
  readonly rootPath: string;
}

function buildElements(element: SpecElement, context: BuildContext): ElementIR[] {
  if (element.max === '0') return [];
  const array = element.max !== '1';
  const base = {
    path: element.path,
    min: element.min ?? 0,
    array,
    description: element.short ?? '',
    summary: element.isSummary === true,
    extensible: !isSystemTyped(element),
  };
  const backbone = context.backboneNames.get(element.path);
  if (backbone) {
    return [
      { ...base, name: lastSegment(element.path), type: backbone, kind: 'complex', targets: [] },
    ];
  }
  if (element.contentReference) {
    const type = resolveContentReference(element.contentReference, context);
    return [{ ...base, name: lastSegment(element.path), type, kind: 'complex', targets: [] }];
  }
  const types = element.type ?? [];
  if (types.length === 0) throw new Error(`${element.id} has no type`);
  if (isChoicePath(element.path)) {
    return types.map((specType) => {
      const type = typeCode(specType);
      return {
        ...base,
        name: choiceElementName(element.path, type),
        type,
        kind: kindOf(type, context.universe),
        choiceGroup: choiceGroupName(element.path),
        targets: targetsOf([specType]),
      };
    });
  }
  if (types.length > 1 && new Set(types.map(typeCode)).size > 1) {
    throw new Error(`${element.id} has several types but is not a choice element`);
  }
  const type = isResourceId(element, context) ? RESOURCE_ID_TYPE : typeCode(types[0]);
  return [
    {
      ...base,
      name: lastSegment(element.path),
      type,
      kind: kindOf(type, context.universe),
      targets: targetsOf(types),
    },
  ];
}

/**
 * `#Questionnaire.item` names an element whose children this one repeats, so this element has the
 * backbone type built for it (`QuestionnaireItem`). The path after `#` is looked up as written
 * among this definition's backbone elements; nothing is renamed, so a constraint datatype's
 * reference must use the paths its snapshot has (`Quantity.…` in `Age`).
 */
function resolveContentReference(reference: string, context: BuildContext): string {
  const path = reference.slice(reference.indexOf('#') + 1);
  const name = context.backboneNames.get(path);
  if (!name)
    throw new Error(
      `${context.name}: contentReference ${reference} does not name a backbone element`,
    );
  return name;
}

/** The FHIR type of an element type; primitive values are typed with FHIRPath system types. */
function typeCode(type: SpecElementType): string {
  if (!type.code.startsWith(SYSTEM_TYPE_PREFIX)) return type.code;
  const declared = type.extension?.find((e) => e.url === FHIR_TYPE_EXTENSION)?.valueUrl;
  const system = SYSTEM_TYPES[type.code.slice(SYSTEM_TYPE_PREFIX.length)];
  const code = declared ?? system;
  if (!code) throw new Error(`Unknown FHIRPath system type ${type.code}`);
  return code;
}

function isSystemTyped(element: SpecElement): boolean {
  return (element.type ?? []).some((t) => t.code.startsWith(SYSTEM_TYPE_PREFIX));
}

/**
 * R4's snapshots type Resource.id as System.String (fhir-type `string`), but a resource's id is
 * an `id`: at most 64 of [A-Za-z0-9-.], as the JSON schema and the REST API require.
 * @see http://hl7.org/fhir/R4/resource.html#id
 */
function isResourceId(element: SpecElement, context: BuildContext): boolean {
  return context.kind === 'resource' && element.path === `${context.rootPath}.id`;
}

function kindOf(type: string, universe: TypeUniverse): ElementKind {
  if (universe.isPrimitive(type)) return 'primitive';
  if (type === 'Resource' || universe.isResource(type)) return 'resource';
  return 'complex';
}

/** Reference(Patient | Group) → [Group, Patient]; Reference(Any) → [] (any resource). */
function targetsOf(types: readonly SpecElementType[]): string[] {
  const names = new Set(types.flatMap((t) => t.targetProfile ?? []).map(typeNameFromUrl));
  if (names.has('Resource')) return [];
  return sortedBy(names, (n) => n);
}

function groupByParent(elements: readonly SpecElement[]): Map<string, SpecElement[]> {
  const children = new Map<string, SpecElement[]>();
  for (const element of elements.slice(1)) {
    const parent = parentPath(element.path);
    const siblings = children.get(parent) ?? [];
    siblings.push(element);
    children.set(parent, siblings);
  }
  return children;
}
