import { describe, expect, it } from 'vitest';
import {
  backboneTypeName,
  capitalize,
  choiceElementName,
  choiceGroupName,
  compareStrings,
  graphqlNames,
  isChoicePath,
  isGraphQLName,
  lastSegment,
  parentPath,
  sortedBy,
  toArgumentName,
  toSearchCode,
  typeNameFromUrl,
} from '../../generator/ir/naming.js';
import { loadSpec } from '../../generator/load/load-spec.js';

type Row<Given, Want> = [name: string, row: { given: Given; want: Want }];

/** One table per one-argument string function: `given` in, `want` out. */
function table(fn: (given: string) => unknown, rows: Row<string, unknown>[]): void {
  it.each(rows)(`${fn.name}: %s`, (_name, { given, want }) => {
    expect(fn(given)).toStrictEqual(want);
  });
}

// The real spec, read once: every search parameter code and every type name in it.
const spec = loadSpec('spec');
const codes = [...new Set(spec.searchParameters.map((p) => p.code))].sort(compareStrings);

describe('capitalize', () => {
  table(capitalize, [
    ['a primitive', { given: 'dateTime', want: 'DateTime' }],
    ['already capitalized', { given: 'Quantity', want: 'Quantity' }],
    ['one letter', { given: 'x', want: 'X' }],
    ['empty', { given: '', want: '' }],
  ]);
});

describe('toArgumentName (search code → GraphQL argument)', () => {
  table(toArgumentName, [
    ['a plain code', { given: 'name', want: 'name' }],
    ['kebab-case', { given: 'address-city', want: 'address_city' }],
    ['several dashes', { given: 'code-value-quantity', want: 'code_value_quantity' }],
    ["Resource's _id", { given: '_id', want: '_id' }],
    ['camelCase kept', { given: '_lastUpdated', want: '_lastUpdated' }],
    ['digits after the start', { given: 'address-postalcode2', want: 'address_postalcode2' }],
  ]);

  it.each<Row<string, string>>([
    ['a leading digit', { given: '2nd-name', want: '"2nd-name"' }],
    ['a modifier', { given: 'name:exact', want: '"name:exact"' }],
    ['a chained path', { given: 'subject.name', want: '"subject.name"' }],
    ['a space', { given: 'given name', want: '"given name"' }],
    ['a non-ASCII letter', { given: 'größe', want: '"größe"' }],
    ['the empty code', { given: '', want: '""' }],
  ])('rejects %s', (_name, { given, want }) => {
    expect(() => toArgumentName(given)).toThrow(
      `Search parameter code ${want} cannot be written as a GraphQL argument name`,
    );
  });
});

describe('toSearchCode (GraphQL argument → search code)', () => {
  table(toSearchCode, [
    ['a plain argument', { given: 'name', want: 'name' }],
    ['snake_case', { given: 'address_city', want: 'address-city' }],
    ['several underscores', { given: 'code_value_quantity', want: 'code-value-quantity' }],
    ['the leading underscore is kept', { given: '_id', want: '_id' }],
    ['camelCase kept', { given: '_lastUpdated', want: '_lastUpdated' }],
    ['only the first underscore is special', { given: '_last_updated', want: '_last-updated' }],
  ]);
});

describe('round trips over every search parameter code in spec/', () => {
  it('reads the codes', () => {
    expect(codes.length).toBeGreaterThan(400);
  });

  it('toSearchCode(toArgumentName(code)) === code for every code', () => {
    const broken = codes.filter((code) => toSearchCode(toArgumentName(code)) !== code);
    expect(broken).toStrictEqual([]);
  });

  it('toArgumentName(toSearchCode(argument)) === argument for every argument', () => {
    const args = codes.map(toArgumentName);
    expect(args.filter((arg) => toArgumentName(toSearchCode(arg)) !== arg)).toStrictEqual([]);
  });

  it('gives distinct codes distinct arguments', () => {
    expect(new Set(codes.map(toArgumentName)).size).toBe(codes.length);
  });

  // Why the round trip holds: `_` only ever starts a code (Resource's _id, _lastUpdated…).
  it('no code has `_` after its first character, nor starts with `-`', () => {
    expect(
      codes.filter((code) => code.slice(1).includes('_') || code.startsWith('-')),
    ).toStrictEqual([]);
  });

  // Codes of these shapes would not round trip; none occurs in spec/ (checked above), and
  // toArgumentName does not reject them. `want` is what toSearchCode gives back.
  it.each<Row<string, string>>([
    ['`_` inside a code', { given: 'a_b', want: 'a-b' }],
    ['a leading `-`', { given: '-a', want: '_a' }],
  ])('does not round trip %s', (_name, { given, want }) => {
    expect(toSearchCode(toArgumentName(given))).toBe(want);
  });
});

describe('choice elements', () => {
  it.each<Row<[path: string, type: string], string>>([
    ['a datatype', { given: ['Observation.value[x]', 'Quantity'], want: 'valueQuantity' }],
    ['a primitive', { given: ['Patient.deceased[x]', 'dateTime'], want: 'deceasedDateTime' }],
    ['in a backbone', { given: ['Observation.component.value[x]', 'string'], want: 'valueString' }],
    [
      'a camelCase group',
      { given: ['Patient.multipleBirth[x]', 'integer'], want: 'multipleBirthInteger' },
    ],
    [
      'a digit in the type',
      { given: ['Extension.value[x]', 'base64Binary'], want: 'valueBase64Binary' },
    ],
  ])('choiceElementName: %s', (_name, { given: [path, type], want }) => {
    expect(choiceElementName(path, type)).toBe(want);
  });

  table(isChoicePath, [
    ['a choice', { given: 'Observation.value[x]', want: true }],
    ['not a choice', { given: 'Observation.value', want: false }],
    ['a child of a choice', { given: 'Observation.value[x].id', want: false }],
  ]);

  table(choiceGroupName, [
    ['a top-level choice', { given: 'Observation.value[x]', want: 'value' }],
    ['in a backbone', { given: 'Observation.component.value[x]', want: 'value' }],
    ['camelCase', { given: 'Patient.multipleBirth[x]', want: 'multipleBirth' }],
  ]);
});

describe('backboneTypeName', () => {
  table(backboneTypeName, [
    ['one level', { given: 'Patient.contact', want: 'PatientContact' }],
    ['two levels', { given: 'Bundle.entry.request', want: 'BundleEntryRequest' }],
    [
      'camelCase segments',
      { given: 'Observation.referenceRange', want: 'ObservationReferenceRange' },
    ],
    ['Task.input is not Task_Input', { given: 'Task.input', want: 'TaskInput' }],
  ]);
});

describe('paths and URLs', () => {
  table(lastSegment, [
    ['a nested path', { given: 'Patient.name.given', want: 'given' }],
    ['a root', { given: 'Patient', want: 'Patient' }],
  ]);
  table(parentPath, [
    ['a nested path', { given: 'Patient.name.given', want: 'Patient.name' }],
    ['a child of the root', { given: 'Patient.name', want: 'Patient' }],
    ['a root', { given: 'Patient', want: '' }],
  ]);
  table(typeNameFromUrl, [
    ['HL7', { given: 'http://hl7.org/fhir/StructureDefinition/Patient', want: 'Patient' }],
    ['ours', { given: 'https://graphir.dev/fhir/StructureDefinition/Bot', want: 'Bot' }],
    ['a bare name', { given: 'Patient', want: 'Patient' }],
  ]);
});

describe('isGraphQLName', () => {
  table(isGraphQLName, [
    ['a field', { given: 'valueQuantity', want: true }],
    ['a leading underscore', { given: '_id', want: true }],
    ['snake_case', { given: 'address_city', want: true }],
    ['kebab-case', { given: 'address-city', want: false }],
    ['a leading digit', { given: '1st', want: false }],
    ['empty', { given: '', want: false }],
  ]);
});

describe('stable ordering', () => {
  it.each<Row<[string, string], number>>([
    ['less', { given: ['a', 'b'], want: -1 }],
    ['equal', { given: ['a', 'a'], want: 0 }],
    ['greater', { given: ['b', 'a'], want: 1 }],
    ['upper case before lower case', { given: ['Z', 'a'], want: -1 }],
    ['by code unit, not by locale', { given: ['é', 'f'], want: 1 }],
    ['a prefix first', { given: ['Patient', 'PatientContact'], want: -1 }],
  ])('compareStrings: %s', (_name, { given: [a, b], want }) => {
    expect(compareStrings(a, b)).toBe(want);
  });

  it('sortedBy sorts a copy by key', () => {
    const given = [{ n: 'b' }, { n: 'a' }, { n: '_x' }, { n: 'A' }];
    expect(sortedBy(given, (item) => item.n).map((item) => item.n)).toStrictEqual([
      'A',
      '_x',
      'a',
      'b',
    ]);
    expect(given.map((item) => item.n)).toStrictEqual(['b', 'a', '_x', 'A']);
  });
});

describe('graphqlNames', () => {
  it.each<Row<[string, string], string>>([
    ['create input', { given: ['Patient', 'input Create'], want: 'PatientCreate' }],
    [
      'backbone update input',
      { given: ['CommunicationPayload', 'input Update'], want: 'CommunicationPayloadUpdate' },
    ],
    ['connection', { given: ['Patient', 'connection'], want: 'PatientConnection' }],
    ['edge', { given: ['Patient', 'edge'], want: 'PatientConnectionEdge' }],
    [
      'reference parameter',
      { given: ['Patient', 'referenceParameter'], want: 'Patient_ReferenceParameter' },
    ],
  ])('%s', (_name, { given: [type, kind], want }) => {
    const name =
      kind === 'input Create' || kind === 'input Update'
        ? graphqlNames.input(type, kind === 'input Create' ? 'Create' : 'Update')
        : graphqlNames[kind as 'connection' | 'edge' | 'referenceParameter'](type);
    expect(name).toBe(want);
  });

  // What keeps these names from clashing with FHIR's: no type or backbone name is another's name
  // plus one of the suffixes, and none has `_`.
  it('no FHIR type or backbone name in spec/ is one of the names added around another', () => {
    const fhirNames = new Set(
      spec.structureDefinitions.flatMap((sd) => [
        sd.id,
        ...(sd.snapshot ?? sd.differential)!.element.map((e) =>
          e.path
            .split('.')
            .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
            .join(''),
        ),
      ]),
    );
    const added = [...fhirNames].flatMap((type) => [
      graphqlNames.input(type, 'Create'),
      graphqlNames.input(type, 'Update'),
      graphqlNames.connection(type),
      graphqlNames.edge(type),
      graphqlNames.referenceParameter(type),
    ]);
    expect(added.filter((name) => fhirNames.has(name))).toStrictEqual([]);
    expect([...fhirNames].filter((name) => name.includes('_'))).toStrictEqual([]);
  });
});
