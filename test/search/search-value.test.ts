import { describe, expect, it } from 'vitest';
import {
  parseSearchValue,
  parseSearchValues,
  SearchValueError,
  type DateSearchValue,
  type SearchPrefix,
  type SearchValue,
} from '../../runtime/search/search-value.js';
import type { SearchType } from '../../runtime/model/search-definition.js';

// String.raw keeps backslashes as the client would type them in a URL: raw`a\,b` is a, \, ',', b.
const raw = String.raw;

type Accepted = [name: string, row: { given: string; want: SearchValue }];
/** `want` is a substring of the error message (whole messages are spelled out where they matter). */
type Rejected = [name: string, row: { given: string; want: string }];

function accepts(type: SearchType, rows: Accepted[]): void {
  it.each(rows)('accepts %s', (_name, { given, want }) => {
    expect(parseSearchValue(type, given, 'arg')).toStrictEqual(want);
  });
}

function rejects(type: SearchType, rows: Rejected[]): void {
  it.each(rows)('rejects %s', (_name, { given, want }) => {
    expect(errorOf(() => parseSearchValue(type, given, 'name'), 'name').message).toContain(want);
  });
}

/** The error `run` throws, checked to be a SearchValueError for `argument`. */
function errorOf(run: () => unknown, argument: string): SearchValueError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SearchValueError);
    expect((error as SearchValueError).argument).toBe(argument);
    return error as SearchValueError;
  }
  throw new Error('expected a SearchValueError, but nothing was thrown');
}

function date(
  prefix: SearchPrefix,
  start: string,
  end: string,
  precision: DateSearchValue['precision'],
): SearchValue {
  return { type: 'date', prefix, start, end, precision };
}

function number(prefix: SearchPrefix, value: number, low: number, high: number): SearchValue {
  return { type: 'number', prefix, value, low, high };
}

function quantity(
  prefix: SearchPrefix,
  [value, low, high]: [number, number, number],
  unit: { system?: string; code?: string } = {},
): SearchValue {
  return { type: 'quantity', prefix, value, low, high, ...unit };
}

describe('string, uri and special values', () => {
  accepts('string', [
    ['a string, keeping its case', { given: 'Eve', want: { type: 'string', value: 'Eve' } }],
    ['escapes', { given: raw`a\,b\$c\|d\\e`, want: { type: 'string', value: raw`a,b$c|d\e` } }],
    ['prefix-like text literally', { given: 'ge2020', want: { type: 'string', value: 'ge2020' } }],
    ['unescaped | and $ literally', { given: 'a|b$c', want: { type: 'string', value: 'a|b$c' } }],
  ]);
  rejects('string', [
    ['an empty string', { given: '', want: 'name: the value is empty (expected a string)' }],
    [
      'a backslash that escapes nothing',
      {
        given: raw`a\b`,
        want: raw`name: "a\b" has a "\" that does not escape "," "$" "|" or "\" (write \\ for a literal backslash)`,
      },
    ],
  ]);
  accepts('uri', [
    [
      'a url',
      {
        given: 'http://acme.org/fhir/ValueSet/1',
        want: { type: 'uri', value: 'http://acme.org/fhir/ValueSet/1' },
      },
    ],
  ]);
  rejects('uri', [['an empty uri', { given: '', want: 'the value is empty (expected a uri)' }]]);
  accepts('special', [
    [
      'a value verbatim',
      { given: raw`1|2|3|km\$`, want: { type: 'special', value: raw`1|2|3|km\$` } },
    ],
  ]);
  rejects('special', [
    ['an empty special', { given: '', want: 'the value is empty (expected a special)' }],
  ]);
});

describe('token values', () => {
  accepts('token', [
    ['a code', { given: 'male', want: { type: 'token', code: 'male' } }],
    [
      'system|code',
      {
        given: 'http://loinc.org|1-5',
        want: { type: 'token', system: 'http://loinc.org', code: '1-5' },
      },
    ],
    ['|code (no system)', { given: '|1-5', want: { type: 'token', system: '', code: '1-5' } }],
    [
      'system| (any code)',
      { given: 'http://loinc.org|', want: { type: 'token', system: 'http://loinc.org' } },
    ],
    ['an escaped |', { given: raw`a\|b`, want: { type: 'token', code: 'a|b' } }],
    [
      'an escaped comma',
      { given: raw`http://x|a\,b`, want: { type: 'token', system: 'http://x', code: 'a,b' } },
    ],
  ]);
  rejects('token', [
    ['an empty token', { given: '', want: 'name: the value is empty (expected a token)' }],
    [
      'a lone |',
      {
        given: '|',
        want: 'name: "|" names neither a system nor a code (expected code, system|code, |code or system|; write \\| for a literal "|")',
      },
    ],
    ['two |', { given: 'a|b|c', want: '"a|b|c" has more than one unescaped "|"' }],
    ['a trailing backslash', { given: 'a\\', want: raw`"a\" has a "\" that does not escape` }],
  ]);
});

describe('reference values', () => {
  accepts('reference', [
    [
      'Type/id',
      { given: 'Patient/123', want: { type: 'reference', resourceType: 'Patient', id: '123' } },
    ],
    ['an id alone', { given: 'a-1.b', want: { type: 'reference', id: 'a-1.b' } }],
    [
      'Type/id/_history/version',
      {
        given: 'Patient/1/_history/2',
        want: { type: 'reference', resourceType: 'Patient', id: '1', version: '2' },
      },
    ],
    [
      'an absolute url ending in Type/id',
      {
        given: 'http://x/fhir/Patient/1',
        want: {
          type: 'reference',
          resourceType: 'Patient',
          id: '1',
          url: 'http://x/fhir/Patient/1',
        },
      },
    ],
    [
      'an absolute url with a version',
      {
        given: 'http://x/Patient/1/_history/7',
        want: {
          type: 'reference',
          resourceType: 'Patient',
          id: '1',
          version: '7',
          url: 'http://x/Patient/1/_history/7',
        },
      },
    ],
    [
      'a urn',
      {
        given: 'urn:uuid:53fefa32-fcbb',
        want: { type: 'reference', url: 'urn:uuid:53fefa32-fcbb' },
      },
    ],
    [
      'a url with a query',
      {
        given: 'http://x/Patient/1?a=b',
        want: { type: 'reference', url: 'http://x/Patient/1?a=b' },
      },
    ],
    [
      'a canonical url|version',
      {
        given: 'http://x/ValueSet/vs|1.0',
        want: {
          type: 'reference',
          resourceType: 'ValueSet',
          id: 'vs',
          version: '1.0',
          url: 'http://x/ValueSet/vs',
        },
      },
    ],
  ]);
  const expected =
    '(expected id, Type/id, Type/id/_history/version, an absolute URL, or a canonical URL|version)';
  rejects('reference', [
    ['an empty reference', { given: '', want: 'the value is empty (expected a reference)' }],
    [
      'a type without id',
      { given: 'Patient/', want: `name: "Patient/" is not a valid reference ${expected}` },
    ],
    ['a leading slash', { given: '/Patient/1', want: '"/Patient/1" is not a valid reference' }],
    ['a lowercase type', { given: 'patient/1', want: '"patient/1" is not a valid reference' }],
    ['an extra segment', { given: 'Patient/1/x', want: '"Patient/1/x" is not a valid reference' }],
    ['a space in the id', { given: 'Patient/a b', want: '"Patient/a b" is not a valid reference' }],
    [
      'an id over 64 characters',
      { given: `Patient/${'a'.repeat(65)}`, want: 'is not a valid reference' },
    ],
    [
      '|version on a relative reference',
      { given: 'Patient/1|2', want: '"Patient/1|2" is not a valid reference' },
    ],
    [
      'an empty canonical version',
      { given: 'http://x/ValueSet/vs|', want: 'is not a valid reference' },
    ],
    ['two |', { given: 'http://x/ValueSet/vs|1|2', want: 'is not a valid reference' }],
    [
      'both kinds of version',
      {
        given: 'http://x/ValueSet/vs/_history/2|1.0',
        want: 'has both a _history version and a canonical |version',
      },
    ],
    [
      'an unparseable url',
      {
        given: 'http://',
        want: 'name: "http://" is not a valid reference: "http://" is not a URL',
      },
    ],
  ]);
});

describe('date values', () => {
  accepts('date', [
    [
      'a year',
      {
        given: '2020',
        want: date('eq', '2020-01-01T00:00:00.000Z', '2021-01-01T00:00:00.000Z', 'year'),
      },
    ],
    [
      'December',
      {
        given: '2020-12',
        want: date('eq', '2020-12-01T00:00:00.000Z', '2021-01-01T00:00:00.000Z', 'month'),
      },
    ],
    [
      'a leap day',
      {
        given: 'ge2024-02-29',
        want: date('ge', '2024-02-29T00:00:00.000Z', '2024-03-01T00:00:00.000Z', 'day'),
      },
    ],
    [
      'a 400-year leap day',
      {
        given: '2000-02-29',
        want: date('eq', '2000-02-29T00:00:00.000Z', '2000-03-01T00:00:00.000Z', 'day'),
      },
    ],
    [
      'year 0050, not 1950',
      {
        given: '0050',
        want: date('eq', '0050-01-01T00:00:00.000Z', '0051-01-01T00:00:00.000Z', 'year'),
      },
    ],
    [
      'a minute with an offset',
      {
        given: 'lt2020-01-01T10:00+02:00',
        want: date('lt', '2020-01-01T08:00:00.000Z', '2020-01-01T08:01:00.000Z', 'minute'),
      },
    ],
    [
      'a minute without a zone, as UTC',
      {
        given: '2020-01-01T23:59',
        want: date('eq', '2020-01-01T23:59:00.000Z', '2020-01-02T00:00:00.000Z', 'minute'),
      },
    ],
    [
      'a second in Z',
      {
        given: 'sa2020-01-01T10:00:30Z',
        want: date('sa', '2020-01-01T10:00:30.000Z', '2020-01-01T10:00:31.000Z', 'second'),
      },
    ],
    [
      'milliseconds with a negative offset',
      {
        given: 'eb2020-01-01T10:00:30.123-05:00',
        want: date('eb', '2020-01-01T15:00:30.123Z', '2020-01-01T15:00:30.124Z', 'millisecond'),
      },
    ],
    [
      'a one-digit fraction',
      {
        given: '2020-01-01T10:00:30.5Z',
        want: date('eq', '2020-01-01T10:00:30.500Z', '2020-01-01T10:00:30.501Z', 'millisecond'),
      },
    ],
    [
      'microseconds, cut to milliseconds',
      {
        given: '1999-12-31T23:59:59.999999Z',
        want: date('eq', '1999-12-31T23:59:59.999Z', '2000-01-01T00:00:00.000Z', 'millisecond'),
      },
    ],
    [
      'a +14:00 offset crossing a day',
      {
        given: 'ap2020-01-01T05:00+14:00',
        want: date('ap', '2019-12-31T15:00:00.000Z', '2019-12-31T15:01:00.000Z', 'minute'),
      },
    ],
  ]);
  const expected =
    '(expected YYYY, YYYY-MM, YYYY-MM-DD or a dateTime, optionally after a prefix such as ge)';
  rejects('date', [
    ['an empty date', { given: '', want: 'the value is empty (expected a date)' }],
    [
      'month 13',
      {
        given: '2020-13-01',
        want: `name: "2020-13-01" is not a valid date: month 13 does not exist ${expected}`,
      },
    ],
    ['30 February', { given: '2021-02-30', want: 'day 30 does not exist in Feb 2021' }],
    ['29 February in 2100', { given: '2100-02-29', want: 'day 29 does not exist in Feb 2100' }],
    ['day 0', { given: '2020-01-00', want: 'day 0 does not exist in Jan 2020' }],
    ['year 0', { given: '0000', want: 'year 0000 does not exist' }],
    ['hour 25', { given: '2020-01-01T25:00', want: 'hour 25 does not exist' }],
    ['hour 24', { given: '2020-01-01T24:00', want: 'hour 24 does not exist' }],
    ['minute 60', { given: '2020-01-01T10:60', want: 'minute 60 does not exist' }],
    ['a leap second', { given: '2016-12-31T23:59:60Z', want: 'second 60 does not exist' }],
    [
      'an offset beyond +14:00',
      { given: '2020-01-01T10:00+14:30', want: 'timezone +14:30 does not exist' },
    ],
    [
      'an offset minute of 75',
      { given: '2020-01-01T10:00-05:75', want: 'timezone -05:75 does not exist' },
    ],
    [
      'an unencoded + in the zone',
      {
        given: '2020-01-01T10:00:00 02:00',
        want: 'the timezone has a space where "+" was meant (encode "+" as %2B in a URL)',
      },
    ],
    [
      'a one-digit month',
      { given: '2020-1-1', want: '"2020-1-1" is not a valid date: not in a supported date format' },
    ],
    ['no separators', { given: '20200101', want: 'not in a supported date format' }],
    ['an hour without minutes', { given: '2020-01-01T10', want: 'not in a supported date format' }],
    ['a zone without a time', { given: '2020-01-01Z', want: 'not in a supported date format' }],
    ['an escaped comma', { given: raw`2020\,2021`, want: 'not in a supported date format' }],
    [
      'a control character, shown escaped',
      { given: '2020\n', want: raw`"2020\u000a" is not a valid date` },
    ],
    [
      'an unknown prefix',
      {
        given: 'xx2020',
        want: 'name: "xx2020" is not a valid date: "xx" is not a search prefix (expected one of eq, ne, gt, lt, ge, le, sa, eb, ap, in lowercase, right before the value)',
      },
    ],
    ['an uppercase prefix', { given: 'GE2020', want: '"GE" is not a search prefix' }],
    [
      'a prefix without a value',
      { given: 'ge', want: 'name: "ge" has the prefix ge but no value after it' },
    ],
    ['a space after the prefix', { given: 'ge 2020', want: 'not in a supported date format' }],
  ]);
});

describe('number values', () => {
  accepts('number', [
    ['an integer, to 3 figures', { given: '100', want: number('eq', 100, 99.5, 100.5) }],
    ['trailing zeros, to 5 figures', { given: '100.00', want: number('eq', 100, 99.995, 100.005) }],
    ['an exponent, to 1 figure', { given: '1e2', want: number('eq', 100, 50, 150) }],
    ['an exponent, to 2 figures', { given: '1.5E2', want: number('eq', 150, 145, 155) }],
    ['a negative exponent', { given: '2.5e-3', want: number('eq', 0.0025, 0.00245, 0.00255) }],
    ['a negative number', { given: '-3.5', want: number('eq', -3.5, -3.55, -3.45) }],
    ['a small number', { given: '0.0001', want: number('eq', 0.0001, 0.00005, 0.00015) }],
    ['a prefix', { given: 'lt5.4', want: number('lt', 5.4, 5.35, 5.45) }],
    ['a prefix before a minus', { given: 'ne-1', want: number('ne', -1, -1.5, -0.5) }],
  ]);
  const expected =
    '(expected a decimal such as 100, -3.5 or 1e2, optionally after a prefix such as ge)';
  rejects('number', [
    ['an empty number', { given: '', want: 'the value is empty (expected a number)' }],
    ['letters', { given: 'abc', want: '"ab" is not a search prefix' }],
    [
      'two dots',
      {
        given: '1..2',
        want: `name: "1..2" is not a valid number: not a decimal number ${expected}`,
      },
    ],
    ['a leading dot', { given: '.5', want: 'not a decimal number' }],
    ['a trailing dot', { given: '5.', want: 'not a decimal number' }],
    ['a bare exponent', { given: '1e', want: 'not a decimal number' }],
    ['hex', { given: '0x10', want: 'not a decimal number' }],
    ['a leading +', { given: '+5', want: 'not a decimal number' }],
    [
      'overflow',
      {
        given: '1e400',
        want: '"1e400" is not a valid number: too large or too small to represent',
      },
    ],
    ['underflow', { given: '1e-400', want: 'too large or too small to represent' }],
    ['an unknown prefix', { given: 'xx5', want: '"xx" is not a search prefix' }],
    [
      'a prefix without a value',
      { given: 'lt', want: '"lt" has the prefix lt but no value after it' },
    ],
  ]);
});

describe('quantity values', () => {
  const ucum = 'http://unitsofmeasure.org';
  accepts('quantity', [
    [
      'number|system|code',
      {
        given: `le5.4|${ucum}|mg`,
        want: quantity('le', [5.4, 5.35, 5.45], { system: ucum, code: 'mg' }),
      },
    ],
    ['number||code', { given: '5.4||mg', want: quantity('eq', [5.4, 5.35, 5.45], { code: 'mg' }) }],
    ['a number alone', { given: 'gt100', want: quantity('gt', [100, 99.5, 100.5]) }],
    [
      'an empty code',
      { given: `5|${ucum}|`, want: quantity('eq', [5, 4.5, 5.5], { system: ucum }) },
    ],
    [
      'an escaped | in the code',
      { given: raw`5||a\|b`, want: quantity('eq', [5, 4.5, 5.5], { code: 'a|b' }) },
    ],
  ]);
  rejects('quantity', [
    ['an empty quantity', { given: '', want: 'the value is empty (expected a quantity)' }],
    [
      'one |',
      {
        given: '5.4|mg',
        want: `name: "5.4|mg" is not a valid quantity: it has 1 unescaped "|" where 0 or 2 belong (expected [prefix]number, [prefix]number|system|code or [prefix]number||code, e.g. le5.4|${ucum}|mg)`,
      },
    ],
    ['three |', { given: '5.4|a|b|c', want: 'it has 3 unescaped "|" where 0 or 2 belong' }],
    [
      'a bad number',
      {
        given: '5,4||mg',
        want: '"5,4||mg" is not a valid quantity: "5,4" is not a decimal number',
      },
    ],
    ['no number', { given: `|${ucum}|mg`, want: '"" is not a decimal number' }],
    [
      'an unknown prefix',
      {
        given: 'xx5.4||mg',
        want: '"xx5.4||mg" is not a valid quantity: "xx" is not a search prefix',
      },
    ],
  ]);
});

describe('composite values', () => {
  accepts('composite', [
    [
      'components, keeping their escapes',
      {
        given: raw`http://loinc.org|8480-6$lt60`,
        want: { type: 'composite', components: ['http://loinc.org|8480-6', 'lt60'] },
      },
    ],
    [
      'an escaped $',
      { given: raw`a\$b$c$d`, want: { type: 'composite', components: [raw`a\$b`, 'c', 'd'] } },
    ],
  ]);
  rejects('composite', [
    [
      'one component',
      {
        given: 'abc',
        want: 'name: "abc" is not a valid composite (expected two or more non-empty values joined by "$"; write \\$ for a literal "$")',
      },
    ],
    ['only an escaped $', { given: raw`a\$b`, want: 'is not a valid composite' }],
    ['an empty last component', { given: 'a$', want: '"a$" is not a valid composite' }],
    ['an empty first component', { given: '$b', want: '"$b" is not a valid composite' }],
  ]);
});

describe('parseSearchValues', () => {
  it.each<[name: string, row: { given: { type: SearchType; raw: string }; want: SearchValue[] }]>([
    ['one value', { given: { type: 'token', raw: 'a' }, want: [{ type: 'token', code: 'a' }] }],
    [
      'alternatives',
      {
        given: { type: 'token', raw: 'a,http://x|b' },
        want: [
          { type: 'token', code: 'a' },
          { type: 'token', system: 'http://x', code: 'b' },
        ],
      },
    ],
    [
      'an escaped comma staying in its value',
      {
        given: { type: 'string', raw: raw`a\,b,c` },
        want: [
          { type: 'string', value: 'a,b' },
          { type: 'string', value: 'c' },
        ],
      },
    ],
    [
      'an escaped backslash before a comma',
      {
        given: { type: 'string', raw: raw`a\\,b` },
        want: [
          { type: 'string', value: 'a\\' },
          { type: 'string', value: 'b' },
        ],
      },
    ],
    [
      'dates',
      {
        given: { type: 'date', raw: 'ge2020,lt2021-06' },
        want: [
          date('ge', '2020-01-01T00:00:00.000Z', '2021-01-01T00:00:00.000Z', 'year'),
          date('lt', '2021-06-01T00:00:00.000Z', '2021-07-01T00:00:00.000Z', 'month'),
        ],
      },
    ],
    [
      'composites',
      {
        given: { type: 'composite', raw: 'a$b,c$d' },
        want: [
          { type: 'composite', components: ['a', 'b'] },
          { type: 'composite', components: ['c', 'd'] },
        ],
      },
    ],
    [
      'an escaped comma inside a composite component',
      {
        given: { type: 'composite', raw: raw`a\,b$c` },
        want: [{ type: 'composite', components: [raw`a\,b`, 'c'] }],
      },
    ],
  ])('accepts %s', (_name, { given, want }) => {
    expect(parseSearchValues(given.type, given.raw, 'arg')).toStrictEqual(want);
  });

  it.each<[name: string, row: { given: { type: SearchType; raw: string }; want: string }]>([
    [
      'an empty value',
      { given: { type: 'token', raw: '' }, want: 'code: the value is empty (expected a token)' },
    ],
    [
      'an empty middle alternative',
      {
        given: { type: 'token', raw: 'a,,b' },
        want: 'code: alternative 2 of "a,,b" is empty (write \\, for a literal comma)',
      },
    ],
    [
      'a trailing comma',
      { given: { type: 'string', raw: 'a,' }, want: 'alternative 2 of "a," is empty' },
    ],
    [
      'a leading comma',
      { given: { type: 'number', raw: ',5' }, want: 'alternative 1 of ",5" is empty' },
    ],
    [
      'one bad alternative',
      {
        given: { type: 'date', raw: '2020,2020-13' },
        want: 'code: "2020-13" is not a valid date: month 13 does not exist',
      },
    ],
    [
      'a bad escape in an alternative',
      { given: { type: 'string', raw: raw`a,b\x` }, want: raw`"b\x" has a "\" that` },
    ],
  ])('rejects %s', (_name, { given, want }) => {
    expect(
      errorOf(() => parseSearchValues(given.type, given.raw, 'code'), 'code').message,
    ).toContain(want);
  });
});

describe('SearchValueError', () => {
  it('is an Error named SearchValueError', () => {
    const error = errorOf(() => parseSearchValue('date', 'x', 'birthdate'), 'birthdate');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('SearchValueError');
  });
});
