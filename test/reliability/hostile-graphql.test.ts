/**
 * Hostile GraphQL: random documents built from FHIR's fields and GraphQL's grammar, valid
 * queries mutated at random, random bytes and unicode, and the known attacks — nesting far past
 * the depth limit, thousands of aliases, fragment cycles and fragments that double at every
 * level, strings of megabytes, broken variables. Each is answered in time: 400 with `errors` and
 * no `data` when it does not parse, validate or fit the limits; 200 otherwise, where a failing
 * field is `null` with an error that is never an internal one. Nothing is stored, except by
 * mutations with valid Patients, which store exactly those.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledExecutions } from '../support/compiled-executions.js';
import { storedVersions } from '../support/stored-versions.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import {
  expectGraphQLErrors,
  expectGraphQLRefusal,
  expectOutcome,
  send,
  tryInputs,
  type Answer,
  type Tally,
} from './hostile-harness.js';
import { patientCase } from './hostile-patients.js';

const SENTINEL = { resourceType: 'Patient', id: 'sentinel', name: [{ family: 'Sentinel' }] };

/** Queries that work: the seeds of the mutation property, and a check that the server answers. */
const VALID_QUERIES = [
  '{ Patient(id: "sentinel") { id name { family given } } }',
  '{ PatientList(name: "sent", _count: 5) { id gender birthDate } }',
  'query Q($id: ID = "sentinel") { p: Patient(id: $id) { ...F } } fragment F on Patient { id active }',
  '{ PatientConnection(_count: 2) { count edges { mode resource { id } } } }',
  '{ PatientList { id ObservationList(_reference: subject) { id status } } }',
  '{ PatientList(_sort: "-birthdate") { name @first { family } } }',
  '{ Patient(id: sentinel) { name(use: official) { family } text @skip(if: true) { div } } }',
  '{ __typename a: __typename }',
];

/** Patient's fields a random document picks from: scalars (null) and objects with their scalars. */
const PATIENT_FIELDS: Record<string, readonly string[] | null> = {
  id: null,
  active: null,
  gender: null,
  birthDate: null,
  name: ['family', 'given', 'use', 'text'],
  telecom: ['system', 'value'],
  identifier: ['system', 'value'],
  meta: ['versionId', 'lastUpdated'],
};
const OBJECT_ARGUMENTS = [
  '',
  '(use: official)',
  '(_count: 1)',
  '(fhirpath: "given")',
  '(_offset: 0)',
];
const DIRECTIVES = [
  '',
  '',
  '',
  '@skip(if: true)',
  '@include(if: false)',
  '@first',
  '@flatten',
  '@singleton',
  '@slice(path: "use")',
];
/** What makes a document wrong: unknown names, selections where none belong or missing, bad arguments. */
const JUNK = [
  'nope',
  'id { x }',
  'name',
  'id(x: 1)',
  '...Missing',
  '... on Nope { id }',
  '@skip',
  'gender @nope',
  '{',
  '$v',
  'name(use: 1.5.5) { family }',
];
/** Scalars of every kind GraphQL has, with the characters that break parsers. */
const literal = fc.oneof(
  fc.string({ maxLength: 20 }).map((s) => JSON.stringify(s)),
  fc.string({ unit: 'binary', maxLength: 20 }).map((s) => JSON.stringify(s)),
  fc.integer().map(String),
  fc.double({ noNaN: true }).map(String),
  fc.constantFrom(
    'true',
    'null',
    'official',
    '$v',
    '[1, "a"]',
    '{a: 1}',
    '"""block"""',
    '-1',
    '99999999999',
  ),
);
const alias = fc.constantFrom('', '', 'a: ', 'b: ', 'x1: ');

/** Selections on a Patient: mostly right (fields, aliases, directives, fragments), sometimes junk. */
const patientSelections = fc.letrec((tie) => ({
  selection: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    {
      weight: 5,
      arbitrary: fc
        .tuple(
          alias,
          fc.constantFrom(...Object.keys(PATIENT_FIELDS)),
          fc.constantFrom(...DIRECTIVES),
        )
        .map(([a, field, directive]) => {
          const children = PATIENT_FIELDS[field];
          return children === null
            ? `${a}${field} ${directive}`
            : `${a}${field} ${directive} { ${children.join(' ')} }`;
        }),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          alias,
          fc.constantFrom('name', 'telecom', 'identifier'),
          fc.constantFrom(...OBJECT_ARGUMENTS),
          fc.constantFrom(...DIRECTIVES),
          fc.integer({ min: 1, max: 3 }),
        )
        .map(
          ([a, field, args, directive, n]) =>
            `${a}${field}${args} ${directive} { ${PATIENT_FIELDS[field]!.slice(0, n).join(' ')} }`,
        ),
    },
    { weight: 1, arbitrary: fc.constant('...P') },
    {
      weight: 1,
      arbitrary: (tie('selections') as fc.Arbitrary<string>).map(
        (inner) => `... on Patient ${inner}`,
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(...JUNK) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom('name', 'id', 'given'),
          fc.constantFrom('use', 'x', '_count'),
          literal,
        )
        .map(([f, arg, value]) => `${f}(${arg}: ${value}) { family }`),
    },
  ),
  selections: fc
    .array(tie('selection') as fc.Arbitrary<string>, { minLength: 1, maxLength: 4 })
    .map((list) => `{ ${list.join(' ')} }`),
})).selections;

/** A whole document: an operation on a root field, and the fragment it spreads (usually). */
const documentArbitrary = fc
  .tuple(
    fc.constantFrom('', 'query ', 'query Q ', 'query Q($v: String) ', 'mutation ', 'subscription '),
    fc.constantFrom(
      'Patient(id: "sentinel")',
      'Patient(id: "missing")',
      'PatientList',
      'PatientList(_count: 0)',
      'PatientList(_count: 3)',
      'PatientList(_count: 2000)',
      'PatientList(name: "sent")',
      'PatientList(gender_not: "male")',
      'PatientList(_sort: "-birthdate")',
    ),
    patientSelections,
    patientSelections.map((inner) => inner.replaceAll('...P', 'id')),
    fc.boolean(),
    fc.boolean(),
  )
  .map(([head, root, selections, fragment, connection, defineFragment]) => {
    const body =
      connection && root.startsWith('PatientList')
        ? `${root.replace('PatientList', 'PatientConnection')} { count edges { resource { ... on Patient ${selections} } } }`
        : `${root} ${selections}`;
    const spreads = selections.includes('...P');
    return `${head}{ ${body} }${spreads && defineFragment ? `\nfragment P on Patient ${fragment}` : ''}`;
  });

/** A valid query edited 1 to 3 times: characters and tokens inserted, deleted or doubled. */
const mutatedQuery = fc
  .tuple(
    fc.constantFrom(...VALID_QUERIES),
    fc.array(
      fc.record({
        at: fc.nat(),
        length: fc.nat({ max: 6 }),
        insert: fc.oneof(
          fc.constantFrom(
            '{',
            '}',
            '(',
            ')',
            '[',
            ']',
            '...',
            '@',
            '$',
            ':',
            '"',
            '"""',
            '#',
            '!',
            '=',
            ',',
            '|',
            '&',
            '\\',
            '\u0000',
            '\ufeff',
            '𝄞',
            'é',
            ' on ',
            'fragment',
            'query',
          ),
          fc.string({ unit: 'binary', maxLength: 3 }),
        ),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  )
  .map(([query, edits]) =>
    edits.reduce((text, { at, length, insert }) => {
      const i = at % (text.length + 1);
      return text.slice(0, i) + insert + text.slice(i + length);
    }, query),
  );

describe.each(await availableEngines())('hostile GraphQL on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
    expect((await server.fhir('/Patient/sentinel', { method: 'PUT', body: SENTINEL })).status).toBe(
      201,
    );
  });
  afterAll(() => server?.stop());

  const graphql = (body: unknown, contentType = 'application/json') =>
    send(`${server.base}/$graphql`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.project.token}`, 'Content-Type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  /** Refused before running (400, no data), or run (200, data, errors only for failed fields). */
  const expectAnswered = (answer: Answer, tally: Tally) => {
    const context = `${answer.status} ${answer.text.slice(0, 300)}`;
    expect([200, 400], context).toContain(answer.status);
    if (answer.status === 400) {
      expectGraphQLRefusal(answer);
      tally.add('refused 400');
    } else {
      expect(answer.body, context).toHaveProperty('data');
      if (answer.body.errors) expectGraphQLErrors(answer);
      tally.add(answer.body.errors ? 'ran with field errors' : 'ran');
    }
  };
  const expectNothingStored = async (versions: number) =>
    expect(await storedVersions(server)).toBe(versions);

  it('the valid queries the mutation property starts from are answered with data', async () => {
    for (const query of VALID_QUERIES) {
      const answer = await graphql({ query });
      expect(answer.status, `${query}: ${answer.text.slice(0, 300)}`).toBe(200);
      expect(answer.body.errors, query).toBeUndefined();
    }
  });

  it('random documents from the grammar: 200 or a 400 refusal, never an internal error', async () => {
    const versions = await storedVersions(server);
    const tally = await tryInputs(
      `random GraphQL documents (${engine})`,
      documentArbitrary,
      async (query, tally) =>
        expectAnswered(await graphql({ query, variables: { v: 'x' } }), tally),
      250,
    );
    expect(tally.count('refused 400')).toBeGreaterThan(0);
    expect(tally.count('ran') + tally.count('ran with field errors')).toBeGreaterThan(0);
    await expectNothingStored(versions);
  });

  it('random documents sent twice: the second answer, compiled where it may be, is the first', async () => {
    const before = await compiledExecutions(server.url);
    await tryInputs(
      `random GraphQL documents sent twice (${engine})`,
      documentArbitrary,
      async (query, tally) => {
        const first = await graphql({ query, variables: { v: 'x' } });
        expectAnswered(first, tally);
        const second = await graphql({ query, variables: { v: 'x' } });
        expect({ status: second.status, body: second.body }, query).toEqual({
          status: first.status,
          body: first.body,
        });
      },
      150,
    );
    expect(await compiledExecutions(server.url)).toBeGreaterThan(before);
  });

  it('valid queries mutated at random: 200 or a 400 refusal, never an internal error', async () => {
    const versions = await storedVersions(server);
    const tally = await tryInputs(
      `mutated valid GraphQL queries (${engine})`,
      mutatedQuery,
      async (query, tally) => expectAnswered(await graphql({ query }), tally),
      250,
    );
    expect(tally.count('refused 400')).toBeGreaterThan(0);
    await expectNothingStored(versions);
  });

  it('random bytes and unicode as the query, raw and in JSON: refused with 400', async () => {
    const versions = await storedVersions(server);
    const input = fc.record({
      text: fc.oneof(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }),
        fc
          .uint8Array({ minLength: 1, maxLength: 200 })
          .map((b) => Buffer.from(b).toString('latin1')),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 100 }),
      ),
      raw: fc.boolean(),
    });
    const tally = await tryInputs(
      `random bytes as GraphQL queries (${engine})`,
      input,
      async ({ text, raw }, tally) => {
        const answer = raw
          ? await graphql(text, 'application/graphql')
          : await graphql({ query: text });
        // Whitespace alone is "no query"; anything else fails to parse. Either way: 400.
        expectGraphQLRefusal(answer);
        tally.add('refused 400');
      },
      150,
    );
    expect(tally.count('refused 400')).toBeGreaterThan(0);
    await expectNothingStored(versions);
  });

  it('PatientCreate with valid and broken Patients: stores exactly the valid ones', async () => {
    const tally = await tryInputs(
      `PatientCreate with valid and broken Patients (${engine})`,
      // GraphQL makes a single value given for a list a list of one (spec §3.11 input
      // coercion): that one is no breakage here.
      patientCase.filter((c) => c.broken !== 'a single object for a list'),
      async ({ patient, broken }, tally) => {
        const versions = await storedVersions(server);
        const answer = await graphql({
          query: 'mutation($r: PatientCreate!) { PatientCreate(res: $r) { id name { family } } }',
          variables: { r: patient },
        });
        const context = `${broken ?? 'valid'}: ${answer.status} ${answer.text.slice(0, 300)}`;
        if (broken) {
          // A value of the wrong shape fails the variable's input type (400); one that fits it
          // fails validation in the resolver (200, the field null with an error).
          expect([200, 400], context).toContain(answer.status);
          expectGraphQLErrors(answer);
          expect(answer.body.data?.PatientCreate ?? null, context).toBeNull();
          await expectNothingStored(versions);
          tally.add(`refused ${answer.status}`);
        } else {
          expect(answer.status, context).toBe(200);
          expect(answer.body.errors, context).toBeUndefined();
          expect(await storedVersions(server)).toBe(versions + 1);
          const stored = await server.fhir(`/Patient/${answer.body.data.PatientCreate.id}`);
          const { meta: _meta, id: _id, ...content } = await stored.json();
          expect(content).toEqual(patient);
          tally.add('stored');
        }
      },
      120,
    );
    expect(tally.count('stored')).toBeGreaterThan(0);
    expect(tally.count('refused 200') + tally.count('refused 400')).toBeGreaterThan(0);
  });

  const nest = (depth: number, open: string, inner: string, close: string) =>
    open.repeat(depth) + inner + close.repeat(depth);
  const fragmentBomb = (levels: number) =>
    '{ PatientList { ...F0 } }\n' +
    Array.from({ length: levels }, (_, i) =>
      i < levels - 1
        ? `fragment F${i} on Patient { id ...F${i + 1} ...F${i + 1} }`
        : `fragment F${i} on Patient { id }`,
    ).join('\n');
  const aliases = (count: number, field: string) =>
    `{ ${Array.from({ length: count }, (_, i) => `a${i}: ${field}`).join(' ')} }`;
  it.each([
    [
      'selections 16 deep (one past the depth limit)',
      `{ Patient(id: "sentinel") ${nest(15, '{ contained { ... on Patient ', '{ id }', '} }')} }`,
    ],
    ['selections 5000 deep', `{ ${nest(5000, 'a { ', 'b', ' }')} }`],
    ['selections 100000 deep', `{ ${nest(100_000, 'a { ', 'b', ' }')} }`],
    [
      'inline fragments 5000 deep',
      `{ PatientList { ${nest(5000, '... on Patient { ', 'id', ' }')} } }`,
    ],
    [
      'a list value 490 deep (under the nesting limit: a validation error)',
      `{ PatientList(name: ${nest(490, '[', '"x"', ']')}) { id } }`,
    ],
    ['a list value 100000 deep', `{ PatientList(name: ${nest(100_000, '[', '"x"', ']')}) { id } }`],
    [
      'an object value 100000 deep',
      `{ PatientList(name: ${nest(100_000, '{a: ', '1', '}')}) { id } }`,
    ],
    ['200000 aliases (past the cost limit)', aliases(200_000, '__typename')],
    [
      'fragments A → B → A',
      '{ PatientList { ...A } } fragment A on Patient { id ...B } fragment B on Patient { ...A }',
    ],
    ['a fragment spreading itself', '{ PatientList { ...A } } fragment A on Patient { id ...A }'],
    [
      'a three-fragment cycle',
      '{ PatientList { ...A } } fragment A on Patient { ...B } fragment B on Patient { ...C } fragment C on Patient { id ...A }',
    ],
    ['fragments doubling 40 times (2^40 fields)', fragmentBomb(40)],
    [
      'a negative _count (which would make the cost negative)',
      `{ a: PatientList(_count: -1000000) { id } ${aliases(500, '__typename').slice(1, -1)} }`,
    ],
    ['a 5 MB query of one character', 'x'.repeat(5_000_000)],
    [
      'a 5 MB search string, past the query size',
      `{ PatientList(name: "${'x'.repeat(5_000_000)}") { id } }`,
    ],
    ['an unterminated 5 MB string', `{ PatientList(name: "${'x'.repeat(5_000_000)}) { id } }`],
    ['an unknown 5 MB field name', `{ ${'f'.repeat(5_000_000)} }`],
    ['U+0000 outside a string', '{ Patient\u0000List { id } }'],
    ['unicode identifiers', '{ Pätient(id: "x") { id } }'],
  ])('%s: 400 with errors, in time', async (_name, query) => {
    const versions = await storedVersions(server);
    const answer = await graphql({ query });
    expectGraphQLRefusal(answer);
    await expectNothingStored(versions);
  });

  it.each([
    [
      '5000 aliases of one field (under the limits)',
      aliases(5000, '__typename'),
      (data: any) => expect(Object.keys(data)).toHaveLength(5000),
    ],
    [
      'unicode in strings and comments',
      '# 𝄞 é 中\n{ PatientList(name: "Sént𝄞") { id } }',
      (data: any) => expect(data.PatientList).toEqual([]),
    ],
    [
      'a byte order mark first',
      '\ufeff{ __typename }',
      (data: any) => expect(data).toEqual({ __typename: 'Query' }),
    ],
    // A page of none: the 2^40 fields would each run once per resource, and there are none.
    [
      'fragments doubling 40 times under _count: 0',
      fragmentBomb(40).replace('PatientList {', 'PatientList(_count: 0) {'),
      (data: any) => expect(data.PatientList).toEqual([]),
    ],
  ])('%s: answered with data', async (_name, query, check) => {
    const answer = await graphql({ query });
    expect(answer.status, answer.text.slice(0, 300)).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    check(answer.body.data);
  });

  const deepVariable = nest(100_000, '[', '', ']');
  it.each([
    [
      'a variable of the wrong type',
      { query: 'query($n: Int) { PatientList(_count: $n) { id } }', variables: { n: 'many' } },
    ],
    [
      'a required variable missing',
      { query: 'query($id: ID!) { Patient(id: $id) { id } }', variables: {} },
    ],
    [
      'an Int past 32 bits',
      { query: 'query($n: Int) { PatientList(_count: $n) { id } }', variables: { n: 2 ** 40 } },
    ],
    ['variables as a list', { query: '{ __typename }', variables: [1] }],
    ['variables as a number', { query: '{ __typename }', variables: 5 }],
    ['variables as broken JSON text', { query: '{ __typename }', variables: '{"a":' }],
    ['an unknown operation name', { query: 'query A { __typename }', operationName: 'B' }],
    ['an operation name that is an object', { query: '{ __typename }', operationName: { a: 1 } }],
    ['a query that is a number', { query: 5 }],
    ['no query', {}],
    [
      'a Patient input of the wrong shape',
      {
        query: 'mutation($r: PatientCreate!) { PatientCreate(res: $r) { id } }',
        variables: { r: { name: 'x' } },
      },
    ],
  ])('%s: 400 with errors', async (_name, body) => {
    const versions = await storedVersions(server);
    expectGraphQLRefusal(await graphql(body));
    await expectNothingStored(versions);
  });

  it('variables 490 deep (under the JSON nesting limit) are read; unused, they change nothing', async () => {
    const answer = await graphql(
      `{"query":"{ __typename }","variables":{"a":${nest(490, '[', '', ']')}}}`,
    );
    expect(answer.status, answer.text.slice(0, 300)).toBe(200);
    expect(answer.body).toEqual({ data: { __typename: 'Query' } });
  });

  it('a Patient input 240 extensions deep (under the JSON nesting limit): a field error, nothing stored', async () => {
    const versions = await storedVersions(server);
    const extensions = nest(
      240,
      '{"url":"http://x","extension":[',
      '{"url":"http://x","valueString":"x"}',
      ']}',
    );
    const answer = await graphql(
      `{"query":"mutation($r: PatientCreate!) { PatientCreate(res: $r) { id } }","variables":{"r":{"resourceType":"Patient","extension":[${extensions}]}}}`,
    );
    expect(answer.status, answer.text.slice(0, 300)).toBe(200);
    expectGraphQLErrors(answer);
    expect(answer.body.errors[0].message).toMatch(/nested too deeply/);
    await expectNothingStored(versions);
  });

  it.each([
    [
      'variables nested 100000 deep',
      `{"query":"{ __typename }","variables":{"a":${deepVariable}}}`,
    ],
    [
      'a Patient input nested 100000 deep',
      `{"query":"mutation($r: PatientCreate!) { PatientCreate(res: $r) { id } }","variables":{"r":{"resourceType":"Patient","extension":[${nest(100_000, '{"url":"http://x","extension":[', '', ']}')}]}}}`,
    ],
    ['a body that is not JSON', '{"query":'],
    ['a JSON body that is a string', '"{ __typename }"'],
  ])('%s: 400, in time, nothing stored', async (_name, body) => {
    const versions = await storedVersions(server);
    const answer = await graphql(body);
    expect(answer.status, answer.text.slice(0, 300)).toBe(400);
    if (answer.contentType.startsWith('application/fhir+json')) expectOutcome(answer, [400]);
    else expectGraphQLRefusal(answer);
    await expectNothingStored(versions);
  });

  it('a mutation over GET, and a body of another media type, are refused with an OperationOutcome', async () => {
    const headers = { Authorization: `Bearer ${server.project.token}` };
    const query = encodeURIComponent('mutation { PatientDelete(id: "sentinel") { id } }');
    expectOutcome(await send(`${server.base}/$graphql?query=${query}`, { headers }), [405]);
    expectOutcome(await graphql('{ __typename }', 'text/html'), [415]);
    const still = await server.fhir('/Patient/sentinel');
    expect(still.status).toBe(200);
  });

  it('negative _offset and broken cursors are field errors, not internal ones', async () => {
    const cursor = (offset: unknown) =>
      Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
    for (const query of [
      '{ PatientList(_offset: -1) { id } }',
      `{ PatientConnection(_cursor: "${cursor(1e300)}") { count } }`,
      `{ PatientConnection(_cursor: "${cursor(-5)}") { count } }`,
      '{ PatientConnection(_cursor: "not a cursor") { count } }',
      '{ PatientConnection(_cursor: "") { count } }',
    ]) {
      const answer = await graphql({ query });
      expect([200, 400], `${query}: ${answer.text.slice(0, 300)}`).toContain(answer.status);
      expectGraphQLErrors(answer);
    }
  });
});
