/**
 * IR rules, checked on the IR of the fixture spec (test/fixtures/spec, described in its README).
 * Loud failures are in build-ir-errors.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { buildIR } from '../../generator/ir/build-ir.js';
import type { ComplexTypeIR, ElementIR, PrimitiveIR, ResourceIR } from '../../generator/ir/ir-types.js';
import { compareStrings } from '../../generator/ir/naming.js';
import { loadSpec } from '../../generator/load/load-spec.js';
import { FIXTURE_SPEC } from './spec-builders.js';

type Row<Given, Want> = [name: string, row: { given: Given; want: Want }];

const ir = buildIR(loadSpec(FIXTURE_SPEC));
const allTypes = [...ir.datatypes, ...ir.resources.flatMap((r) => [r, ...r.backbones])];

function typeNamed(name: string): ComplexTypeIR {
  const type = allTypes.find((t) => t.name === name);
  if (!type) throw new Error(`The fixture IR has no type ${name}`);
  return type;
}

function resource(name: string): ResourceIR {
  return ir.resources.find((r) => r.name === name) ?? (typeNamed(name) as ResourceIR);
}

/** `Patient.deceasedBoolean`: an element by its type's name and its own (expanded) name. */
function element(ref: string): ElementIR {
  const [typeName, name] = ref.split('.');
  const found = typeNamed(typeName).elements.find((e) => e.name === name);
  if (!found) throw new Error(`${typeName} has no element ${name}`);
  return found;
}

const names = (items: readonly { name: string }[]) => items.map((item) => item.name);

describe('types in the IR', () => {
  it('has the fixture’s primitives, datatypes and resources, sorted', () => {
    expect(names(ir.primitives)).toStrictEqual([
      'boolean', 'code', 'date', 'dateTime', 'decimal', 'id', 'integer', 'positiveInt', 'string', 'uri',
    ]);
    expect(names(ir.datatypes)).toStrictEqual([
      'BackboneElement', 'Element', 'Extension', 'HumanName', 'Identifier', 'Quantity', 'Reference',
    ]);
    expect(names(ir.resources)).toStrictEqual(['Observation', 'OperationOutcome', 'Patient', 'Widget']);
  });

  it('keeps elements in StructureDefinition order, choices expanded in place', () => {
    expect(names(resource('Observation').elements)).toStrictEqual([
      'id', 'language', 'contained', 'extension', 'modifierExtension', 'identifier', 'status', 'subject',
      'focus', 'effectiveDateTime', 'valueQuantity', 'valueString', 'valueBoolean', 'valueInteger',
      'referenceRange', 'component',
    ]);
  });
});

describe('primitives', () => {
  it.each<Row<string, Partial<PrimitiveIR>>>([
    ['integer', { given: 'integer', want: { jsonType: 'number', integer: true, pattern: '-?([0]|([1-9][0-9]*))' } }],
    // positiveInt's value is System.String in R4, but it derives from integer: a JSON number.
    ['positiveInt', { given: 'positiveInt', want: { jsonType: 'number', integer: true, pattern: '[1-9][0-9]*' } }],
    ['decimal', { given: 'decimal', want: { jsonType: 'number', integer: false } }],
    ['boolean', { given: 'boolean', want: { jsonType: 'boolean', integer: false, pattern: 'true|false' } }],
    ['code (derives from string)', { given: 'code', want: { jsonType: 'string', pattern: '[^\\s]+(\\s[^\\s]+)*' } }],
    ['id', { given: 'id', want: { jsonType: 'string', pattern: '[A-Za-z0-9\\-\\.]{1,64}' } }],
    ['dateTime', { given: 'dateTime', want: { jsonType: 'string', integer: false } }],
    ['a description from the short', { given: 'uri', want: { description: 'Primitive Type uri' } }],
  ])('%s', (_name, { given, want }) => {
    expect(ir.primitives.find((p) => p.name === given)).toMatchObject(want);
  });
});

describe('elements', () => {
  it.each<Row<string, Partial<ElementIR>>>([
    // Choice expansion: one element per type, all in the group.
    ['a primitive choice', { given: 'Patient.deceasedBoolean', want: { type: 'boolean', kind: 'primitive', choiceGroup: 'deceased', path: 'Patient.deceased[x]' } }],
    ['its sibling', { given: 'Patient.deceasedDateTime', want: { type: 'dateTime', kind: 'primitive', choiceGroup: 'deceased' } }],
    ['a datatype choice', { given: 'Observation.valueQuantity', want: { type: 'Quantity', kind: 'complex', choiceGroup: 'value', array: false } }],
    ['a one-type choice', { given: 'Observation.effectiveDateTime', want: { type: 'dateTime', choiceGroup: 'effective' } }],
    ['a choice in a backbone', { given: 'ObservationComponent.valueString', want: { type: 'string', choiceGroup: 'value', path: 'Observation.component.value[x]' } }],
    ['a Reference choice', { given: 'Extension.valueReference', want: { type: 'Reference', kind: 'complex', targets: [] } }],
    // Backbone elements are typed by their backbone type.
    ['a backbone', { given: 'Patient.contact', want: { type: 'PatientContact', kind: 'complex', array: true } }],
    ['a nested backbone', { given: 'WidgetPart.dimension', want: { type: 'WidgetPartDimension', array: false } }],
    // contentReference reuses the type of the element it names.
    ['a contentReference', { given: 'ObservationComponent.referenceRange', want: { type: 'ObservationReferenceRange', kind: 'complex', array: true, path: 'Observation.component.referenceRange' } }],
    ['a recursive contentReference', { given: 'WidgetPart.part', want: { type: 'WidgetPart', kind: 'complex', array: true } }],
    // Values typed with FHIRPath system types: no `_x` sibling; Resource.id is an `id`.
    ['Element.id', { given: 'Element.id', want: { type: 'string', kind: 'primitive', extensible: false } }],
    ['a datatype’s id', { given: 'HumanName.id', want: { type: 'string', extensible: false } }],
    ['a backbone’s id', { given: 'PatientContact.id', want: { type: 'string', extensible: false } }],
    ['Extension.url', { given: 'Extension.url', want: { type: 'uri', kind: 'primitive', extensible: false, min: 1 } }],
    ['Resource.id', { given: 'Patient.id', want: { type: 'id', kind: 'primitive', extensible: false, summary: true } }],
    ['an inherited Resource.id', { given: 'Widget.id', want: { type: 'id', extensible: false } }],
    ['an ordinary primitive', { given: 'Patient.birthDate', want: { type: 'date', extensible: true } }],
    // Cardinality.
    ['0..*', { given: 'Patient.name', want: { type: 'HumanName', min: 0, array: true } }],
    ['1..1', { given: 'Observation.status', want: { type: 'code', min: 1, array: false } }],
    ['1..*', { given: 'OperationOutcome.issue', want: { type: 'OperationOutcomeIssue', min: 1, array: true } }],
    ['a repeating primitive', { given: 'HumanName.given', want: { type: 'string', array: true } }],
    ['contained resources', { given: 'Patient.contained', want: { type: 'Resource', kind: 'resource', array: true } }],
    // Reference targets.
    ['Reference(Patient)', { given: 'Observation.subject', want: { targets: ['Patient'] } }],
    ['Reference(Resource) means any', { given: 'Observation.focus', want: { targets: [] } }],
    ['a backbone’s Reference', { given: 'PatientLink.other', want: { targets: ['Patient'], min: 1 } }],
    ['a differential’s Reference', { given: 'Widget.owner', want: { targets: ['Patient'] } }],
    ['the short definition', { given: 'Patient.gender', want: { description: 'male | female | other | unknown' } }],
  ])('%s: %s', (_name, { given, want }) => {
    expect(element(given)).toMatchObject(want);
  });

  it('gives contentReference elements no type of their own', () => {
    const typeNames = names(allTypes);
    expect(typeNames).not.toContain('ObservationComponentReferenceRange');
    expect(typeNames).not.toContain('WidgetPartPart');
  });
});

describe('complex types', () => {
  it.each<Row<string, Partial<ComplexTypeIR>>>([
    ['a datatype', { given: 'HumanName', want: { kind: 'datatype', path: 'HumanName', owner: 'HumanName' } }],
    ['a resource', { given: 'Patient', want: { kind: 'resource', path: 'Patient', owner: 'Patient' } }],
    ['a backbone', { given: 'PatientContact', want: { kind: 'backbone', path: 'Patient.contact', owner: 'Patient' } }],
    ['a backbone of a backbone element', { given: 'PatientLink', want: { kind: 'backbone', path: 'Patient.link', owner: 'Patient' } }],
    ['a backbone with a choice', { given: 'ObservationComponent', want: { path: 'Observation.component', owner: 'Observation' } }],
    ['a nested backbone', { given: 'WidgetPartDimension', want: { kind: 'backbone', path: 'Widget.part.dimension', owner: 'Widget' } }],
    ['a description from the root’s short', { given: 'WidgetPart', want: { description: 'A part, which may have parts' } }],
  ])('%s: %s', (_name, { given, want }) => {
    expect(typeNamed(given)).toMatchObject(want);
  });

  it.each<Row<string, string[]>>([
    ['Patient', { given: 'Patient', want: ['PatientContact', 'PatientLink'] }],
    ['Observation', { given: 'Observation', want: ['ObservationReferenceRange', 'ObservationComponent'] }],
    ['Widget', { given: 'Widget', want: ['WidgetPart', 'WidgetPartDimension'] }],
  ])('backbones of %s, in element order', (_name, { given, want }) => {
    expect(names(resource(given).backbones)).toStrictEqual(want);
  });

  // The string-valued primitive children other than id, without choice members, in element order.
  it.each<Row<string, string[]>>([
    ['HumanName', { given: 'HumanName', want: ['use', 'text', 'family', 'given'] }],
    ['Identifier', { given: 'Identifier', want: ['use', 'system', 'value'] }],
    ['Extension (url, not value[x])', { given: 'Extension', want: ['url'] }],
    ['Reference', { given: 'Reference', want: ['reference', 'type', 'display'] }],
    ['Quantity (not the decimal value)', { given: 'Quantity', want: ['comparator', 'unit', 'system', 'code'] }],
    ['a backbone', { given: 'PatientLink', want: ['type'] }],
    ['a backbone with only a choice', { given: 'ObservationComponent', want: [] }],
    ['Element', { given: 'Element', want: [] }],
  ])('filterBy of %s', (_name, { given, want }) => {
    expect(typeNamed(given).filterBy).toStrictEqual(want);
  });
});

describe('a differential-only resource (Widget)', () => {
  it('inherits DomainResource’s elements under its own name, then adds its own', () => {
    const widget = resource('Widget');
    // DomainResource.contained is overridden with max 0, so it is gone.
    expect(names(widget.elements)).toStrictEqual([
      'id', 'language', 'extension', 'modifierExtension', 'identifier', 'label', 'size', 'owner', 'part',
    ]);
    expect(element('Widget.extension')).toMatchObject({ path: 'Widget.extension', type: 'Extension', array: true });
    expect(widget.description).toBe('A thing with parts');
  });

  it('names its own and the shared spec/ files as sources', () => {
    expect(resource('Widget').sources).toStrictEqual([
      'spec/hl7-r4/search-parameters.json',
      'spec/own/Widget.SearchParameters.json',
      'spec/own/Widget.StructureDefinition.json',
    ]);
  });

  // BUG (generator/ir/snapshot.ts:34-35): elements a differential adds are copied as they are, so a
  // backbone it declares (Widget.part, type BackboneElement) lacks the id, extension and
  // modifierExtension that every BackboneElement has (HL7's snapshots list them for Patient.contact).
  // Fix: when an own element is typed BackboneElement (or Element), insert that type's snapshot
  // children, renamed under the element's path, before the differential's own children.
  it.fails('gives a backbone declared in a differential BackboneElement’s elements', () => {
    expect(names(typeNamed('WidgetPart').elements)).toStrictEqual([
      'id', 'extension', 'modifierExtension', 'name', 'dimension', 'part',
    ]);
  });
});

describe('search', () => {
  it.each<Row<string, string[]>>([
    ['Patient', { given: 'Patient', want: ['_id', 'birthdate', 'death-date', 'family', 'gender', 'identifier', 'link', 'name'] }],
    ['Observation', { given: 'Observation', want: ['_id', 'date', 'identifier', 'patient', 'status', 'status-value-quantity', 'subject', 'value-quantity'] }],
    ['OperationOutcome', { given: 'OperationOutcome', want: ['_id'] }],
    ['Widget', { given: 'Widget', want: ['_id', 'label', 'owner', 'size'] }],
  ])('codes of %s', (_name, { given, want }) => {
    expect(resource(given).searchParameters.map((p) => p.code)).toStrictEqual(want);
  });
});
