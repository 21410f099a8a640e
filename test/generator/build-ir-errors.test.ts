/**
 * The generator's loud failures: each row adds (or removes) a definition to the fixture spec, in
 * memory, and names the error buildIR must throw.
 */
import { describe, expect, it } from 'vitest';
import { buildIR } from '../../generator/ir/build-ir.js';
import type { Spec, StructureDefinition } from '../../generator/load/spec-types.js';
import { definition, fixtureWith, searchParameter } from './spec-builders.js';

type Row = [name: string, row: { given: Spec; want: string | RegExp }];

const HL7 = 'http://hl7.org/fhir/StructureDefinition/';

/** A differential-only resource, like spec/graphir/Bot. */
function differentialOnly(root: string, base?: string): StructureDefinition {
  return {
    resourceType: 'StructureDefinition',
    id: 'Gadget',
    url: 'https://graphir.dev/fhir/StructureDefinition/Gadget',
    name: 'Gadget',
    type: 'Gadget',
    kind: 'resource',
    abstract: false,
    ...(base ? { baseDefinition: base } : {}),
    differential: {
      element: [
        { id: root, path: root },
        { id: `${root}.label`, path: `${root}.label`, type: [{ code: 'string' }] },
      ],
    },
  };
}

describe('types', () => {
  it.each<Row>([
    [
      'an unknown type',
      {
        given: fixtureWith({ sds: [definition('Gadget', 'resource', [['Gadget.size', 'Size']])] }),
        want: 'Gadget.size has the unknown type Size',
      },
    ],
    [
      'an unknown type in a backbone',
      {
        given: fixtureWith({
          sds: [
            definition('Gadget', 'resource', [
              ['Gadget.part', 'BackboneElement'],
              ['Gadget.part.size', 'Size'],
            ]),
          ],
        }),
        want: 'Gadget.part.size has the unknown type Size',
      },
    ],
    [
      'a datatype named like a backbone type',
      {
        given: fixtureWith({
          sds: [definition('PatientContact', 'complex-type', [['PatientContact.name', 'string']])],
        }),
        want: /^Type name PatientContact \(Patient\.contact\) clashes with PatientContact$/,
      },
    ],
    [
      // The id is the type name, so this is caught before type names are compared.
      'a datatype with a primitive’s id',
      {
        given: fixtureWith({
          sds: [
            {
              ...definition('uri', 'complex-type', [['uri.text', 'string']]),
              url: `${HL7}uri-type`,
            },
          ],
        }),
        want: 'Two StructureDefinitions in spec/ have the id uri',
      },
    ],
    [
      'two StructureDefinitions with one id',
      {
        given: fixtureWith({
          sds: [definition('HumanName', 'complex-type', [['HumanName.text', 'string']])],
        }),
        want: 'Two StructureDefinitions in spec/ have the id HumanName',
      },
    ],
    [
      'an element without a type',
      {
        given: fixtureWith({ sds: [definition('Gadget', 'resource', [['Gadget.label']])] }),
        want: 'Gadget.label has no type',
      },
    ],
    [
      'several types on an element that is not a choice',
      {
        given: fixtureWith({
          sds: [definition('Gadget', 'resource', [['Gadget.label', ['string', 'boolean']]])],
        }),
        want: 'Gadget.label has several types but is not a choice element',
      },
    ],
    [
      'a contentReference to an element that is not a backbone',
      {
        given: fixtureWith({
          sds: [
            definition('Gadget', 'resource', [
              ['Gadget.label', 'string'],
              ['Gadget.other', '#Gadget.label'],
            ]),
          ],
        }),
        want: 'Gadget: contentReference #Gadget.label does not name a backbone element',
      },
    ],
    [
      'an unknown FHIRPath system type',
      {
        given: fixtureWith({
          sds: [
            definition('Gadget', 'resource', [
              ['Gadget.at', 'http://hl7.org/fhirpath/System.Quantity'],
            ]),
          ],
        }),
        want: 'Unknown FHIRPath system type http://hl7.org/fhirpath/System.Quantity',
      },
    ],
    [
      'a primitive without a value element',
      {
        given: fixtureWith({
          sds: [definition('markdown', 'primitive-type', [['markdown.id', 'string']])],
        }),
        want: 'Primitive type markdown has no value element',
      },
    ],
    [
      'a differential whose base is not in spec/',
      {
        given: fixtureWith({ sds: [differentialOnly('Gadget', `${HL7}MetadataResource`)] }),
        want: 'StructureDefinition Gadget has no snapshot; give a differential and a baseDefinition found in spec/',
      },
    ],
    [
      'a differential without a base',
      {
        given: fixtureWith({ sds: [differentialOnly('Gadget')] }),
        want: 'StructureDefinition Gadget has no snapshot',
      },
    ],
    [
      'a differential that does not start at its type',
      {
        given: fixtureWith({ sds: [differentialOnly('Gizmo', `${HL7}DomainResource`)] }),
        want: 'StructureDefinition Gadget: the differential must start with the element Gadget',
      },
    ],
    [
      'a backbone in a differential, without BackboneElement in spec/',
      {
        given: fixtureWith({}, ['BackboneElement']),
        want: 'StructureDefinition Widget: Widget.part is a BackboneElement, but spec/ has no http://hl7.org/fhir/StructureDefinition/BackboneElement',
      },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(() => buildIR(given)).toThrow(want);
  });
});

describe('search parameters', () => {
  it.each<Row>([
    [
      'an unknown base',
      {
        given: fixtureWith({
          sps: [searchParameter({ code: 'name', base: ['Practitioner'], type: 'string' })],
        }),
        want: 'SearchParameter Practitioner-name has the unknown base Practitioner',
      },
    ],
    [
      'an unknown base among known ones',
      {
        given: fixtureWith({
          sps: [
            searchParameter({
              id: 'individual-phone',
              code: 'phone',
              base: ['Patient', 'Person'],
              type: 'token',
            }),
          ],
        }),
        want: 'SearchParameter individual-phone has the unknown base Person',
      },
    ],
    [
      'an unknown search type',
      {
        given: fixtureWith({
          sps: [searchParameter({ code: 'nickname', base: ['Patient'], type: 'fuzzy' })],
        }),
        want: 'SearchParameter Patient-nickname has the unknown type fuzzy',
      },
    ],
    [
      'two parameters with one code on one base',
      {
        given: fixtureWith({
          sps: [
            searchParameter({
              id: 'Patient-name-2',
              code: 'name',
              base: ['Patient'],
              type: 'string',
            }),
          ],
        }),
        want: 'Patient has two search parameters with the code name',
      },
    ],
    [
      'a Resource-level code that a resource also defines',
      {
        given: fixtureWith({
          sps: [searchParameter({ code: '_id', base: ['Widget'], type: 'token' })],
        }),
        want: 'Widget has two search parameters with the code _id',
      },
    ],
    [
      'a composite with an unknown component',
      {
        given: fixtureWith({
          sps: [
            searchParameter({
              code: 'code-value',
              base: ['Observation'],
              type: 'composite',
              component: [
                {
                  definition: 'http://hl7.org/fhir/SearchParameter/clinical-code',
                  expression: 'code',
                },
              ],
            }),
          ],
        }),
        want: 'SearchParameter Observation-code-value: unknown component http://hl7.org/fhir/SearchParameter/clinical-code',
      },
    ],
    [
      'a code that cannot be a GraphQL argument',
      {
        given: fixtureWith({
          sps: [searchParameter({ code: 'name:exact', base: ['Patient'], type: 'string' })],
        }),
        want: 'Search parameter code "name:exact" cannot be written as a GraphQL argument name',
      },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(() => buildIR(given)).toThrow(want);
  });
});
