/**
 * Element rules of the IR (generator/ir/build-elements.ts), on the fixture spec: choice expansion,
 * backbone and contentReference types, FHIRPath system types, cardinality, Reference targets.
 */
import { describe, expect, it } from 'vitest';
import type { ElementIR } from '../../generator/ir/ir-types.js';
import { allTypes, element, names, type Row } from './fixture-ir.js';

describe('elements', () => {
  it.each<Row<string, Partial<ElementIR>>>([
    // Choice expansion: one element per type, all in the group.
    [
      'a primitive choice',
      {
        given: 'Patient.deceasedBoolean',
        want: {
          type: 'boolean',
          kind: 'primitive',
          choiceGroup: 'deceased',
          path: 'Patient.deceased[x]',
        },
      },
    ],
    [
      'its sibling',
      {
        given: 'Patient.deceasedDateTime',
        want: { type: 'dateTime', kind: 'primitive', choiceGroup: 'deceased' },
      },
    ],
    [
      'a datatype choice',
      {
        given: 'Observation.valueQuantity',
        want: { type: 'Quantity', kind: 'complex', choiceGroup: 'value', array: false },
      },
    ],
    [
      'a one-type choice',
      {
        given: 'Observation.effectiveDateTime',
        want: { type: 'dateTime', choiceGroup: 'effective' },
      },
    ],
    [
      'a choice in a backbone',
      {
        given: 'ObservationComponent.valueString',
        want: { type: 'string', choiceGroup: 'value', path: 'Observation.component.value[x]' },
      },
    ],
    [
      'a Reference choice',
      {
        given: 'Extension.valueReference',
        want: { type: 'Reference', kind: 'complex', targets: [] },
      },
    ],
    // Backbone elements are typed by their backbone type.
    [
      'a backbone',
      { given: 'Patient.contact', want: { type: 'PatientContact', kind: 'complex', array: true } },
    ],
    [
      'a nested backbone',
      { given: 'WidgetPart.dimension', want: { type: 'WidgetPartDimension', array: false } },
    ],
    // contentReference reuses the type of the element it names.
    [
      'a contentReference',
      {
        given: 'ObservationComponent.referenceRange',
        want: {
          type: 'ObservationReferenceRange',
          kind: 'complex',
          array: true,
          path: 'Observation.component.referenceRange',
        },
      },
    ],
    [
      'a recursive contentReference',
      { given: 'WidgetPart.part', want: { type: 'WidgetPart', kind: 'complex', array: true } },
    ],
    // Values typed with FHIRPath system types: no `_x` sibling; Resource.id is an `id`.
    [
      'Element.id',
      { given: 'Element.id', want: { type: 'string', kind: 'primitive', extensible: false } },
    ],
    ['a datatype’s id', { given: 'HumanName.id', want: { type: 'string', extensible: false } }],
    [
      'a backbone’s id',
      { given: 'PatientContact.id', want: { type: 'string', extensible: false } },
    ],
    [
      'Extension.url',
      {
        given: 'Extension.url',
        want: { type: 'uri', kind: 'primitive', extensible: false, min: 1 },
      },
    ],
    [
      'Resource.id',
      {
        given: 'Patient.id',
        want: { type: 'id', kind: 'primitive', extensible: false, summary: true },
      },
    ],
    ['an inherited Resource.id', { given: 'Widget.id', want: { type: 'id', extensible: false } }],
    [
      'an ordinary primitive',
      { given: 'Patient.birthDate', want: { type: 'date', extensible: true } },
    ],
    // Cardinality.
    ['0..*', { given: 'Patient.name', want: { type: 'HumanName', min: 0, array: true } }],
    ['1..1', { given: 'Observation.status', want: { type: 'code', min: 1, array: false } }],
    [
      '1..*',
      {
        given: 'OperationOutcome.issue',
        want: { type: 'OperationOutcomeIssue', min: 1, array: true },
      },
    ],
    ['a repeating primitive', { given: 'HumanName.given', want: { type: 'string', array: true } }],
    [
      'contained resources',
      { given: 'Patient.contained', want: { type: 'Resource', kind: 'resource', array: true } },
    ],
    // Reference targets.
    ['Reference(Patient)', { given: 'Observation.subject', want: { targets: ['Patient'] } }],
    ['Reference(Resource) means any', { given: 'Observation.focus', want: { targets: [] } }],
    [
      'a backbone’s Reference',
      { given: 'PatientLink.other', want: { targets: ['Patient'], min: 1 } },
    ],
    ['a differential’s Reference', { given: 'Widget.owner', want: { targets: ['Patient'] } }],
    [
      'the short definition',
      { given: 'Patient.gender', want: { description: 'male | female | other | unknown' } },
    ],
  ])('%s: %s', (_name, { given, want }) => {
    expect(element(given)).toMatchObject(want);
  });

  it('gives contentReference elements no type of their own', () => {
    const typeNames = names(allTypes);
    expect(typeNames).not.toContain('ObservationComponentReferenceRange');
    expect(typeNames).not.toContain('WidgetPartPart');
  });
});
