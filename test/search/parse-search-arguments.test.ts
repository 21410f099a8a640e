import { describe, expect, it } from 'vitest';
import { parsePatientSearch } from '../../generated/search/Patient.js';
import { parseObservationSearch } from '../../generated/search/Observation.js';

describe('generated typed search parsers', () => {
  it.each([
    [
      'a string parameter',
      { name: 'Eve' },
      [{ code: 'name', values: [{ type: 'string', value: 'Eve' }] }],
    ],
    [
      'a modifier suffix',
      { name_exact: 'Eve' },
      [{ code: 'name', modifier: 'exact', values: [{ type: 'string', value: 'Eve' }] }],
    ],
    [
      'snake_case to kebab-case',
      { address_city: 'Boston' },
      [{ code: 'address-city', values: [{ type: 'string', value: 'Boston' }] }],
    ],
    [
      'commas are OR',
      { gender: 'male,female' },
      [
        {
          code: 'gender',
          values: [
            { type: 'token', code: 'male' },
            { type: 'token', code: 'female' },
          ],
        },
      ],
    ],
    [
      'several values are AND',
      { given: ['a', 'b'] },
      [
        { code: 'given', values: [{ type: 'string', value: 'a' }] },
        { code: 'given', values: [{ type: 'string', value: 'b' }] },
      ],
    ],
    [
      'missing',
      { birthdate_missing: 'true' },
      [{ code: 'birthdate', modifier: 'missing', missing: true }],
    ],
    [
      'token :text takes a string',
      { gender_text: 'ma' },
      [{ code: 'gender', modifier: 'text', values: [{ type: 'string', value: 'ma' }] }],
    ],
  ])('%s', (_name, given, want) => {
    expect(parsePatientSearch(given)).toMatchObject(want);
  });

  it('parses a date with a prefix', () => {
    const [criterion] = parseObservationSearch({ date: 'ge2020-01' });
    expect(criterion).toMatchObject({
      code: 'date',
      values: [
        {
          type: 'date',
          prefix: 'ge',
          start: '2020-01-01T00:00:00.000Z',
          end: '2020-02-01T00:00:00.000Z',
        },
      ],
    });
  });

  it.each([
    [
      'an unknown argument',
      () => parsePatientSearch({ colour: 'red' } as never),
      /colour: unknown search parameter for Patient/,
    ],
    ['a malformed date', () => parsePatientSearch({ birthdate: '2020-13-01' }), /birthdate/],
    [
      'a bad :missing value',
      () => parsePatientSearch({ birthdate_missing: 'maybe' }),
      /expected true or false/,
    ],
  ])('rejects %s, naming the argument', (_name, call, message) => {
    expect(call).toThrow(message);
  });
});
