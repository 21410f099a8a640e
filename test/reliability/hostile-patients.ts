/**
 * Patients for the hostile-input tests (not a test file itself): valid ones, each element drawn
 * from what FHIR R4 allows, and the same broken on purpose in one way FHIR forbids for certain —
 * an unknown or empty property name, a value of the wrong JSON type, an impossible primitive,
 * an empty string, object or array, `null`, U+0000 or an unpaired surrogate in a string. A test
 * then knows, without asking the server's own validator, which ones a server must store.
 * @see http://hl7.org/fhir/R4/json.html
 */
import fc from 'fast-check';

export type Json = Record<string, unknown>;

/**
 * Text valid as a FHIR string: letters, digits, punctuation, non-Latin scripts, inner spaces —
 * ideographic and no-break ones too (string's pattern is an XML Schema regex, where `\S` is all
 * but space, tab, CR and LF).
 */
const text = fc
  .tuple(
    fc.constantFrom(...'AbcXyz09éß中😀'),
    fc.string({ unit: fc.constantFrom(..."abc XYZ-.,'é中😀0\u00a0\u3000"), maxLength: 20 }),
  )
  .map(([first, rest]) => first + rest);

const day = fc
  .date({ min: new Date('1900-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

export const validPatient: fc.Arbitrary<Json> = fc
  .record(
    {
      active: fc.boolean(),
      gender: fc.constantFrom('male', 'female', 'other', 'unknown'),
      birthDate: fc.oneof(
        day,
        day.map((d) => d.slice(0, 7)),
        day.map((d) => d.slice(0, 4)),
      ),
      name: fc.array(
        fc.record(
          {
            use: fc.constantFrom('official', 'usual', 'nickname', 'maiden'),
            family: text,
            given: fc.array(text, { minLength: 1, maxLength: 3 }),
          },
          { requiredKeys: ['family'] },
        ),
        { minLength: 1, maxLength: 3 },
      ),
      telecom: fc.array(
        fc.record({ system: fc.constantFrom('phone', 'email', 'url'), value: text }),
        { minLength: 1, maxLength: 2 },
      ),
      multipleBirthInteger: fc.integer({ min: 0, max: 2_147_483_647 }),
      identifier: fc.array(
        fc.record({ system: fc.constantFrom('urn:a', 'http://example.org/ids'), value: text }),
        { minLength: 1, maxLength: 2 },
      ),
    },
    { requiredKeys: [] },
  )
  .map((patient) => ({ resourceType: 'Patient', ...patient }));

/** One way to break a Patient, with what it breaks (for messages and tallies). */
export interface Breakage {
  readonly what: string;
  apply(patient: Json): Json;
}

const set =
  (key: string, value: unknown) =>
  (patient: Json): Json => ({ ...patient, [key]: value });
const inName =
  (family: string) =>
  (patient: Json): Json => ({ ...patient, name: [{ family }] });

const breakages: readonly Breakage[] = [
  { what: 'an unknown property', apply: set('nmae', [{ family: 'x' }]) },
  { what: 'a property named by case only', apply: set('Gender', 'male') },
  { what: 'an empty property name', apply: set('', 'x') },
  { what: 'a boolean as a string', apply: set('active', 'true') },
  { what: 'a date as a number', apply: set('birthDate', 19700101) },
  { what: 'an impossible date', apply: set('birthDate', '1970-13-45') },
  { what: 'a code as an array', apply: set('gender', ['male']) },
  { what: 'an integer past 32 bits', apply: set('multipleBirthInteger', 2_147_483_648) },
  { what: 'a fraction for an integer', apply: set('multipleBirthInteger', 1.5) },
  { what: 'an empty string', apply: set('gender', '') },
  { what: 'null', apply: set('active', null) },
  { what: 'an empty object', apply: set('name', [{}]) },
  { what: 'an empty list', apply: set('telecom', []) },
  { what: 'a single object for a list', apply: set('name', { family: 'x' }) },
  { what: 'an invalid id', apply: set('id', 'a/b') },
  { what: 'U+0000 in a string', apply: inName('a\u0000b') },
  { what: 'an unpaired surrogate in a string', apply: inName('a\ud800b') },
  { what: 'a property holding U+0000', apply: set('x\u0000', 'y') },
];

export const breakage: fc.Arbitrary<Breakage> = fc.constantFrom(...breakages);

/** A Patient and, half of the time, one breakage applied to it. */
export const patientCase: fc.Arbitrary<{ patient: Json; broken?: string }> = fc
  .tuple(validPatient, fc.option(breakage, { freq: 2 }))
  .map(([patient, broken]) =>
    broken ? { patient: broken.apply(patient), broken: broken.what } : { patient },
  );
