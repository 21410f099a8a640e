import { describe, expect, it } from 'vitest';
import { parseBotInput } from '../../generated/inputs/Bot.js';
import { parseObservationInput } from '../../generated/inputs/Observation.js';
import { parsePatientInput } from '../../generated/inputs/Patient.js';
import { ResourceValidationError } from '../../runtime/validation/validation-issue.js';

const issuesOf = (parse: () => unknown) => {
  try {
    parse();
  } catch (error) {
    if (error instanceof ResourceValidationError)
      return error.issues.map((i) => `${i.expression}: ${i.diagnostics}`);
    throw error;
  }
  return [];
};

describe('generated typed input parsers over the whole R4 definitions', () => {
  it('accepts a realistic Patient and returns it typed', () => {
    const patient = parsePatientInput({
      resourceType: 'Patient',
      id: 'example',
      meta: { versionId: '1', lastUpdated: '2024-01-02T03:04:05.678Z' },
      identifier: [{ system: 'urn:oid:1.2.36.146.595.217.0.1', value: '12345' }],
      active: true,
      name: [{ use: 'official', family: 'Chalmers', given: ['Peter', 'James'] }],
      gender: 'male',
      birthDate: '1974-12-25',
      _birthDate: {
        extension: [
          {
            url: 'http://hl7.org/fhir/StructureDefinition/patient-birthTime',
            valueDateTime: '1974-12-25T14:35:45-05:00',
          },
        ],
      },
      deceasedBoolean: false,
      address: [
        { use: 'home', line: ['534 Erewhon St'], city: 'PleasantVille', postalCode: '3999' },
      ],
      contact: [
        {
          relationship: [
            { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0131', code: 'N' }] },
          ],
        },
      ],
      managingOrganization: { reference: 'Organization/1' },
    });
    expect(patient.name?.[0].family).toBe('Chalmers');
  });

  it.each([
    [
      'an unknown element',
      () => parsePatientInput({ resourceType: 'Patient', nmae: [] }),
      /Patient.nmae: Unknown element "nmae"/,
    ],
    [
      'a wrong primitive type',
      () => parsePatientInput({ resourceType: 'Patient', active: 'yes' }),
      /Patient.active/,
    ],
    [
      'a malformed date',
      () => parsePatientInput({ resourceType: 'Patient', birthDate: '1974-13-25' }),
      /Patient.birthDate/,
    ],
    [
      'two members of a choice',
      () =>
        parsePatientInput({
          resourceType: 'Patient',
          deceasedBoolean: true,
          deceasedDateTime: '2020',
        }),
      /deceased/,
    ],
    [
      'a missing required element',
      () => parseObservationInput({ resourceType: 'Observation', code: { text: 'x' } }),
      /Observation.status is required/,
    ],
    [
      'the wrong resourceType',
      () => parsePatientInput({ resourceType: 'Observation' }),
      /Expected resourceType "Patient"/,
    ],
    [
      '_id on Resource.id (a system value, not a primitive)',
      () => parsePatientInput({ resourceType: 'Patient', id: 'a', _id: { id: 'x' } }),
      /Unknown element "_id"/,
    ],
    [
      'a Bot without code',
      () => parseBotInput({ resourceType: 'Bot', name: 'echo' }),
      /Bot.code is required/,
    ],
  ])('rejects %s with the path of the problem', (_name, parse, message) => {
    expect(issuesOf(parse).join('\n')).toMatch(message);
  });
});
