/**
 * SQL metacharacters (`'`, `;`, `--`, `/*`, `\`, `%`, `_`, U+0000, `$$`, unicode) in every search
 * parameter of Patient and Observation — each parameter from the generated search definitions,
 * over REST (GET and POST `_search`) and as GraphQL arguments. Each search is answered 200 with
 * the right Bundle or 400 with an OperationOutcome, never 500. "Right": no sentinel value holds
 * any of these characters, so a search matches nothing — except under `:not`, which matches every
 * resource of the type. A `%` or `_` that reached SQL's LIKE unescaped would match the sentinel,
 * and an injection would change or lose it; afterwards every sentinel is still there, unchanged,
 * and still found by its own values (so "nothing found" is not a search that never works).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSearchDefinition } from '../../generated/search/index.js';
import type { SearchParameterDefinition } from '../../runtime/model/search-definition.js';
import { storedVersions } from '../support/stored-versions.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import {
  expectGraphQLErrors,
  expectOutcome,
  send,
  tryInputs,
  type Answer,
} from './hostile-harness.js';

const SENTINELS = [
  {
    resourceType: 'Patient',
    id: 'sentinel-patient',
    active: true,
    name: [{ family: 'Sentinel', given: ['Sam'] }],
    gender: 'female',
    birthDate: '1970-01-01',
    identifier: [{ system: 'urn:sentinel', value: 'S1' }],
    telecom: [{ system: 'email', value: 'sam@example.org' }],
    address: [{ city: 'Springfield', postalCode: '12345', country: 'US' }],
  },
  {
    resourceType: 'Observation',
    id: 'sentinel-observation',
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: '29463-7', display: 'Body weight' }] },
    subject: { reference: 'Patient/sentinel-patient' },
    effectiveDateTime: '2020-01-01T00:00:00Z',
    valueQuantity: { value: 70, unit: 'kg', system: 'http://unitsofmeasure.org', code: 'kg' },
  },
];
/** Searches that must find each sentinel: the control for every "found nothing" below. */
const FINDS_SENTINEL = [
  'Patient?name=sent',
  'Patient?identifier=urn:sentinel|S1',
  'Patient?address-city=spring',
  'Observation?code=http://loinc.org|29463-7',
  'Observation?subject=Patient/sentinel-patient',
  'Observation?value-quantity=70',
];
const METACHARACTER_VALUES = [
  "'",
  "';--",
  "' OR '1'='1",
  '"; DROP TABLE resource; --',
  '/*',
  '*/',
  '\\\\',
  '\\',
  '%',
  '_',
  '%_%',
  '\u0000',
  'a\u0000b',
  '$$',
  '$1',
  'é𝄞',
  '\u202e',
];
const TYPES = ['Patient', 'Observation'] as const;
/**
 * Metacharacters, search-grammar characters and unicode without letters or digits: no value made
 * of them can read as a sentinel's own value, however accents and case are folded. (Combining
 * marks are left out: string search folds them away, and `:contains` of nothing matches all.)
 */
const hostileValue = fc.oneof(
  fc.constantFrom(...METACHARACTER_VALUES),
  fc.string({
    unit: fc.constantFrom(
      ...["'", '"', ';', '-', '/', '*', '\\', '%', '_', '\u0000', '$', ',', '|', ':', '.', ' '],
      ...['𝄞', '😀', '中', '\u202e', '\u00a0', '\ufeff'],
    ),
    minLength: 1,
    maxLength: 30,
  }),
);
const parametersOf = (type: string): SearchParameterDefinition[] =>
  Object.values(loadSearchDefinition(type).parameters);

describe.each(await availableEngines())('SQL metacharacters in search on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
    for (const resource of SENTINELS) {
      const response = await server.fhir(`/${resource.resourceType}/${resource.id}`, {
        method: 'PUT',
        body: resource,
      });
      expect(response.status).toBe(201);
    }
  });
  afterAll(() => server?.stop());

  const headers = () => ({ Authorization: `Bearer ${server.project.token}` });
  const search = (type: string, name: string, value: string, post = false): Promise<Answer> => {
    const query = `${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
    return post
      ? send(`${server.base}/${type}/_search`, {
          method: 'POST',
          headers: { ...headers(), 'Content-Type': 'application/x-www-form-urlencoded' },
          body: query,
        })
      : send(`${server.base}/${type}?${query}`, { headers: headers() });
  };
  /** 200 with nothing found (every sentinel under `:not`), or 400 with an OperationOutcome. */
  const expectNothingFoundOrRefused = (answer: Answer, modifier: string | undefined) => {
    const context = `${answer.status} ${answer.text.slice(0, 300)}`;
    expect([200, 400], context).toContain(answer.status);
    if (answer.status === 400) return expectOutcome(answer, [400]);
    expect(answer.body, context).toMatchObject({ resourceType: 'Bundle', type: 'searchset' });
    expect(answer.body.total, context).toBe(modifier === 'not' ? 1 : 0);
  };
  const expectSentinelsIntact = async (versions: number) => {
    expect(await storedVersions(server)).toBe(versions);
    for (const resource of SENTINELS) {
      const read = await server.fhir(`/${resource.resourceType}/${resource.id}`);
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ ...resource, meta: { versionId: '1' } });
    }
    for (const query of FINDS_SENTINEL) {
      const found = await send(`${server.base}/${query}`, { headers: headers() });
      expect(found.body?.total, `${query}: ${found.text.slice(0, 200)}`).toBe(1);
    }
  };

  it.each(TYPES)('every %s search parameter with every metacharacter value', async (type) => {
    const versions = await storedVersions(server);
    let tried = 0;
    for (const parameter of parametersOf(type)) {
      for (const value of METACHARACTER_VALUES) {
        expectNothingFoundOrRefused(await search(type, parameter.code, value), undefined);
        tried++;
      }
    }
    console.log(
      `[hostile] ${type}: every search parameter × every metacharacter value: ${tried} searches (${engine})`,
    );
    await expectSentinelsIntact(versions);
  });

  it.each([
    ['_sort', ["'", '-', 'name;--', '%', '\u0000']],
    ['_include', ["'", 'Patient:', "Patient:organization';--", '\u0000:x']],
    ['_revinclude', ["Observation:subject'", '*', 'Observation:\u0000']],
    ['_count', ["'", '-1', '1e3', '1;--', '\u0000', '99999999999999999999']],
    ['_offset', ["'", '-1', '1 OR 1=1', '\u0000']],
    ['_total', ["'", 'accurate;--']],
    ['_summary', ["'", 'count;--']],
    ['_format', ["'", 'json;--']],
    ["name:'", ['x']],
    ['name:exact;--', ['x']],
    ["na'me", ['x']],
    ['_has:Observation:subject:code', ["'"]],
    ['\u0000', ['x']],
  ] as [string, string[]][])(
    'result parameter or name %s with hostile values: 400 with an OperationOutcome',
    async (name, values) => {
      const versions = await storedVersions(server);
      for (const value of values) {
        const answer = await search('Patient', name, value);
        expectOutcome(answer, [400]);
      }
      await expectSentinelsIntact(versions);
    },
  );

  it('random parameters, modifiers and values over GET and POST _search', async () => {
    const searchInput = fc.constantFrom(...TYPES).chain((type) =>
      fc.record({
        type: fc.constant(type),
        parameter: fc.constantFrom(...parametersOf(type)),
        modifierPick: fc.nat(),
        value: hostileValue,
        post: fc.boolean(),
      }),
    );
    const versions = await storedVersions(server);
    const tally = await tryInputs(
      `random search parameters and values (${engine})`,
      searchInput,
      async ({ type, parameter, modifierPick, value, post }, tally) => {
        // No modifier, one the parameter offers, or a reference's target type.
        const modifiers = [undefined, ...parameter.modifiers, ...(parameter.targets ?? [])];
        const modifier = modifiers[modifierPick % modifiers.length];
        const name = modifier ? `${parameter.code}:${modifier}` : parameter.code;
        const answer = await search(type, name, value, post);
        expectNothingFoundOrRefused(answer, modifier);
        tally.add(`${answer.status}`);
      },
      200,
    );
    expect(tally.count('200')).toBeGreaterThan(0);
    expect(tally.count('400')).toBeGreaterThan(0);
    await expectSentinelsIntact(versions);
  });

  it('random GraphQL search arguments and values (as variables)', async () => {
    const argumentInput = fc.constantFrom(...TYPES).chain((type) =>
      fc.record({
        type: fc.constant(type),
        argument: fc.constantFrom(...Object.keys(loadSearchDefinition(type).arguments)),
        value: hostileValue,
      }),
    );
    const versions = await storedVersions(server);
    const tally = await tryInputs(
      `random GraphQL search arguments (${engine})`,
      argumentInput,
      async ({ type, argument, value }, tally) => {
        const [, modifier] = loadSearchDefinition(type).arguments[argument];
        const answer = await send(`${server.base}/$graphql`, {
          method: 'POST',
          headers: { ...headers(), 'Content-Type': 'application/json' },
          body: JSON.stringify({
            query: `query($v: String) { ${type}List(${argument}: $v) { id } }`,
            variables: { v: value },
          }),
        });
        const context = `${answer.status} ${answer.text.slice(0, 300)}`;
        expect(answer.status, context).toBe(200);
        if (answer.body.errors) {
          expectGraphQLErrors(answer);
          expect(answer.body.data?.[`${type}List`], context).toBeNull();
          tally.add('refused');
        } else {
          const found = answer.body.data[`${type}List`];
          expect(found.length, context).toBe(modifier === 'not' ? 1 : 0);
          tally.add('answered');
        }
      },
      150,
    );
    expect(tally.count('refused')).toBeGreaterThan(0);
    expect(tally.count('answered')).toBeGreaterThan(0);
    await expectSentinelsIntact(versions);
  });
});
