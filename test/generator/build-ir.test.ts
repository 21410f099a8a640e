/**
 * IR rules, checked on the IR of the fixture spec (test/fixtures/spec, described in its README):
 * which types there are, primitives, complex types, and a differential-only resource. Elements are
 * in build-elements.test.ts, search in build-search.test.ts and search-arguments.test.ts, loud
 * failures in build-ir-errors.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ComplexTypeIR, ElementIR, PrimitiveIR } from '../../generator/ir/ir-types.js';
import { element, ir, names, resource, typeNamed, type Row } from './fixture-ir.js';

describe('types in the IR', () => {
  it('has the fixture’s primitives, datatypes and resources, sorted', () => {
    expect(names(ir.primitives)).toStrictEqual([
      'boolean',
      'code',
      'date',
      'dateTime',
      'decimal',
      'id',
      'integer',
      'positiveInt',
      'string',
      'uri',
    ]);
    expect(names(ir.datatypes)).toStrictEqual([
      'BackboneElement',
      'Element',
      'Extension',
      'HumanName',
      'Identifier',
      'Quantity',
      'Reference',
    ]);
    expect(names(ir.resources)).toStrictEqual([
      'Observation',
      'OperationOutcome',
      'Patient',
      'Widget',
    ]);
  });

  it('keeps elements in StructureDefinition order, choices expanded in place', () => {
    expect(names(resource('Observation').elements)).toStrictEqual([
      'id',
      'language',
      'contained',
      'extension',
      'modifierExtension',
      'identifier',
      'status',
      'subject',
      'focus',
      'effectiveDateTime',
      'valueQuantity',
      'valueString',
      'valueBoolean',
      'valueInteger',
      'referenceRange',
      'component',
    ]);
  });
});

describe('primitives', () => {
  it.each<Row<string, Partial<PrimitiveIR>>>([
    [
      'integer',
      {
        given: 'integer',
        want: { jsonType: 'number', integer: true, pattern: '-?([0]|([1-9][0-9]*))' },
      },
    ],
    // positiveInt's value is System.String in R4, but it derives from integer: a JSON number.
    [
      'positiveInt',
      { given: 'positiveInt', want: { jsonType: 'number', integer: true, pattern: '[1-9][0-9]*' } },
    ],
    ['decimal', { given: 'decimal', want: { jsonType: 'number', integer: false } }],
    [
      'boolean',
      { given: 'boolean', want: { jsonType: 'boolean', integer: false, pattern: 'true|false' } },
    ],
    [
      'code (derives from string)',
      { given: 'code', want: { jsonType: 'string', pattern: '[^\\s]+(\\s[^\\s]+)*' } },
    ],
    ['id', { given: 'id', want: { jsonType: 'string', pattern: '[A-Za-z0-9\\-\\.]{1,64}' } }],
    ['dateTime', { given: 'dateTime', want: { jsonType: 'string', integer: false } }],
    ['a description from the short', { given: 'uri', want: { description: 'Primitive Type uri' } }],
    [
      'its spec/ file',
      { given: 'uri', want: { sources: ['test/fixtures/spec/hl7-r4/profiles-types.json'] } },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(ir.primitives.find((p) => p.name === given)).toMatchObject(want);
  });
});

describe('complex types', () => {
  it.each<Row<string, Partial<ComplexTypeIR>>>([
    [
      'a datatype',
      { given: 'HumanName', want: { kind: 'datatype', path: 'HumanName', owner: 'HumanName' } },
    ],
    [
      'a resource',
      { given: 'Patient', want: { kind: 'resource', path: 'Patient', owner: 'Patient' } },
    ],
    [
      'a backbone',
      {
        given: 'PatientContact',
        want: { kind: 'backbone', path: 'Patient.contact', owner: 'Patient' },
      },
    ],
    [
      'a backbone of a backbone element',
      { given: 'PatientLink', want: { kind: 'backbone', path: 'Patient.link', owner: 'Patient' } },
    ],
    [
      'a backbone with a choice',
      {
        given: 'ObservationComponent',
        want: { path: 'Observation.component', owner: 'Observation' },
      },
    ],
    [
      'a nested backbone',
      {
        given: 'WidgetPartDimension',
        want: { kind: 'backbone', path: 'Widget.part.dimension', owner: 'Widget' },
      },
    ],
    [
      'a description from the root’s short',
      { given: 'WidgetPart', want: { description: 'A part, which may have parts' } },
    ],
  ])('%s: %s', (_name, { given, want }) => {
    expect(typeNamed(given)).toMatchObject(want);
  });

  it.each<Row<string, string[]>>([
    ['Patient', { given: 'Patient', want: ['PatientContact', 'PatientLink'] }],
    [
      'Observation',
      { given: 'Observation', want: ['ObservationReferenceRange', 'ObservationComponent'] },
    ],
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
    [
      'Quantity (not the decimal value)',
      { given: 'Quantity', want: ['comparator', 'unit', 'system', 'code'] },
    ],
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
      'id',
      'language',
      'extension',
      'modifierExtension',
      'identifier',
      'label',
      'size',
      'owner',
      'part',
    ]);
    expect(element('Widget.extension')).toMatchObject({
      path: 'Widget.extension',
      type: 'Extension',
      array: true,
    });
    expect(widget.description).toBe('A thing with parts');
  });

  // DomainResource and Resource (profiles-resources.json) give Widget its first elements, and
  // BackboneElement (profiles-types.json) those of its backbones.
  it('names its own and the spec/ files it inherits from and takes parameters from', () => {
    expect(resource('Widget').sources).toStrictEqual([
      'test/fixtures/spec/hl7-r4/profiles-resources.json',
      'test/fixtures/spec/hl7-r4/profiles-types.json',
      'test/fixtures/spec/hl7-r4/search-parameters.json',
      'test/fixtures/spec/own/Widget.SearchParameters.json',
      'test/fixtures/spec/own/Widget.StructureDefinition.json',
    ]);
    expect(typeNamed('WidgetPart').sources).toStrictEqual([
      'test/fixtures/spec/hl7-r4/profiles-resources.json',
      'test/fixtures/spec/hl7-r4/profiles-types.json',
      'test/fixtures/spec/own/Widget.StructureDefinition.json',
    ]);
  });

  it('names only its own file for a type with a snapshot', () => {
    expect(resource('Patient').sources).toStrictEqual([
      'test/fixtures/spec/hl7-r4/profiles-resources.json',
      'test/fixtures/spec/hl7-r4/search-parameters.json',
    ]);
  });

  // HL7's snapshots list BackboneElement's id, extension and modifierExtension for Patient.contact;
  // a backbone declared in a differential gets them too, before its own children.
  it.each<Row<string, string[]>>([
    [
      'a backbone',
      {
        given: 'WidgetPart',
        want: ['id', 'extension', 'modifierExtension', 'name', 'dimension', 'part'],
      },
    ],
    [
      'a nested backbone',
      {
        given: 'WidgetPartDimension',
        want: ['id', 'extension', 'modifierExtension', 'value', 'unit'],
      },
    ],
  ])('gives %s declared in a differential BackboneElement’s elements', (_name, { given, want }) => {
    expect(names(typeNamed(given).elements)).toStrictEqual(want);
  });

  it.each<Row<string, Partial<ElementIR>>>([
    [
      'WidgetPart.id',
      {
        given: 'WidgetPart.id',
        want: { path: 'Widget.part.id', type: 'string', extensible: false },
      },
    ],
    [
      'WidgetPart.modifierExtension',
      {
        given: 'WidgetPart.modifierExtension',
        want: { path: 'Widget.part.modifierExtension', type: 'Extension', array: true },
      },
    ],
  ])('renames BackboneElement’s %s under the backbone', (_name, { given, want }) => {
    expect(element(given)).toMatchObject(want);
  });
});

describe('search', () => {
  it.each<Row<string, string[]>>([
    [
      'Patient',
      {
        given: 'Patient',
        want: ['_id', 'birthdate', 'death-date', 'family', 'gender', 'identifier', 'link', 'name'],
      },
    ],
    [
      'Observation',
      {
        given: 'Observation',
        want: [
          '_id',
          'date',
          'identifier',
          'patient',
          'status',
          'status-value-quantity',
          'subject',
          'value-quantity',
        ],
      },
    ],
    ['OperationOutcome', { given: 'OperationOutcome', want: ['_id'] }],
    ['Widget', { given: 'Widget', want: ['_id', 'label', 'owner', 'size'] }],
  ])('codes of %s', (_name, { given, want }) => {
    expect(resource(given).searchParameters.map((p) => p.code)).toStrictEqual(want);
  });
});
