/**
 * GraphQL over HTTP (https://graphql.github.io/graphql-over-http/draft/) on `$graphql`: the media
 * type negotiated from Accept, each refusal's status in `application/graphql-response+json` and in
 * plain `application/json` (which keeps the statuses and OperationOutcomes it always had), and the
 * `extensions.code` of every error, over HTTP against the real server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopedClient } from '../access/helpers.js';
import { storedVersions } from '../support/stored-versions.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const GRAPHQL_RESPONSE = 'application/graphql-response+json';
/** What an Apollo-style client that knows the spec sends. */
const PREFERS_GRAPHQL_RESPONSE = 'application/graphql-response+json, application/json;q=0.9';
const BODY_LIMIT = 20_000;
const BOT_IDENTIFIER = { system: 'https://example.org/bots', value: 'taken' };
const BOT_CODE = 'export async function handler() { return "ok"; }';

/** How a request asks for its answer, and the media type it gets. */
const MODES = [
  { mode: 'graphql-response+json', accept: GRAPHQL_RESPONSE, type: GRAPHQL_RESPONSE },
  { mode: 'application/json', accept: 'application/json', type: 'application/json' },
] as const;
type Mode = (typeof MODES)[number];

interface Ask {
  readonly method?: 'GET' | 'POST';
  /** Under the FHIR base; `/$graphql` by default. */
  readonly path?: string;
  /** JSON-encoded unless a string. */
  readonly body?: unknown;
  readonly contentType?: string;
  /** The project's token by default; null sends none. */
  readonly token?: string | null;
  readonly accept?: string;
}

interface Answer {
  readonly status: number;
  readonly type: string;
  readonly headers: Headers;
  readonly body: any;
}

describe.each(await availableEngines())('GraphQL over HTTP on %s', (engine) => {
  let server: TestServer;
  /** A client of the project that may read Observations only. */
  let observationsOnly: string;
  let rootToken: string;

  const ask = async ({
    method = 'POST',
    path = '/$graphql',
    body,
    contentType = 'application/json',
    token,
    accept,
  }: Ask): Promise<Answer> => {
    const response = await fetch(`${server.base}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'Content-Type': contentType }),
        ...(accept === undefined ? {} : { Accept: accept }),
        ...(token === null ? {} : { Authorization: `Bearer ${token ?? server.project.token}` }),
      },
      body: body === undefined || typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      type: response.headers.get('content-type') ?? '',
      headers: response.headers,
      body: JSON.parse(text),
    };
  };
  const query = (text: string, more: object = {}): Ask => ({ body: { query: text, ...more } });

  beforeAll(async () => {
    server = await startTestServer(engine, { GRAPHIR_MAX_BODY_BYTES: String(BODY_LIMIT) });
    const seeded = await server.fhir('/Patient/p1', {
      method: 'PUT',
      body: { resourceType: 'Patient', id: 'p1', gender: 'female' },
    });
    expect(seeded.status).toBe(201);
    const observation = await server.fhir('/Observation/o1', {
      method: 'PUT',
      body: {
        resourceType: 'Observation',
        id: 'o1',
        status: 'final',
        code: { text: 'weight' },
        subject: { reference: 'Patient/missing' },
      },
    });
    expect(observation.status).toBe(201);
    const bot = await server.fhir('/Bot/b1', {
      method: 'PUT',
      body: {
        resourceType: 'Bot',
        id: 'b1',
        name: 'taken',
        identifier: [BOT_IDENTIFIER],
        code: BOT_CODE,
      },
    });
    expect(bot.status).toBe(201);
    rootToken = await server.rootToken();
    observationsOnly = (
      await scopedClient(
        server,
        server.project.projectId,
        server.project.token,
        'system/Observation.rs',
      )
    ).token;
  });
  afterAll(() => server?.stop());

  describe('the media type from Accept', () => {
    it.each([
      ['no Accept header', undefined, 'application/json'],
      ['*/*', '*/*', 'application/json'],
      ['application/*', 'application/*', 'application/json'],
      ['application/json', 'application/json', 'application/json'],
      ['graphql-response+json alone', GRAPHQL_RESPONSE, GRAPHQL_RESPONSE],
      ['graphql-response+json, then json by q', PREFERS_GRAPHQL_RESPONSE, GRAPHQL_RESPONSE],
      [
        'both with charset=utf-8, as the spec recommends',
        `${GRAPHQL_RESPONSE}; charset=utf-8, application/json; charset=utf-8`,
        GRAPHQL_RESPONSE,
      ],
      ['json first, at the same q', `application/json, ${GRAPHQL_RESPONSE}`, 'application/json'],
      [
        'json first, but at a lower q',
        `application/json;q=0.5, ${GRAPHQL_RESPONSE}`,
        GRAPHQL_RESPONSE,
      ],
      [
        "a browser's Accept",
        'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
        'application/json',
      ],
    ])('%s', async (_name, accept, type) => {
      for (const request of [
        query('{ Patient(id: "p1") { id gender } }'),
        {
          method: 'GET' as const,
          path: '/$graphql?query=%7BPatient(id%3A%22p1%22)%7Bid%20gender%7D%7D',
        },
      ]) {
        const answer = await ask({ ...request, accept });
        expect(answer.status).toBe(200);
        expect(answer.type).toBe(`${type}; charset=utf-8`);
        expect(answer.headers.get('vary')).toMatch(/Accept/);
        expect(answer.body).toEqual({ data: { Patient: { id: 'p1', gender: 'female' } } });
      }
    });

    it.each(MODES)('answers introspection from its cache in $mode', async ({ accept, type }) => {
      for (let i = 0; i < 2; i++) {
        const answer = await ask({ ...query('{ __schema { queryType { name } } }'), accept });
        expect(answer.status).toBe(200);
        expect(answer.type).toBe(`${type}; charset=utf-8`);
        expect(answer.body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
      }
    });

    it.each([
      ['POST that accepts only text/html', { ...query('{ __typename }'), accept: 'text/html' }],
      [
        'GET with a query that accepts only text/html',
        { method: 'GET' as const, path: '/$graphql?query=%7B__typename%7D', accept: 'text/html' },
      ],
      [
        'a charset other than UTF-8',
        { ...query('{ __typename }'), accept: `${GRAPHQL_RESPONSE}; charset=latin1` },
      ],
      ['XML', { ...query('{ __typename }'), accept: 'application/xml' }],
      [
        'no token either (406 comes first)',
        { ...query('{ __typename }'), accept: 'text/html', token: null },
      ],
    ])('406 for %s, as GraphQL errors in JSON', async (_name, request) => {
      const answer = await ask(request);
      expect(answer.status).toBe(406);
      expect(answer.type).toBe('application/json; charset=utf-8');
      expect(answer.body).not.toHaveProperty('data');
      expect(answer.body.errors).toEqual([
        {
          message: expect.stringMatching(/Accept/),
          extensions: {
            code: 'BAD_REQUEST',
            resource: {
              resourceType: 'OperationOutcome',
              issue: [expect.objectContaining({ severity: 'error', code: 'not-supported' })],
            },
          },
        },
      ]);
    });
  });

  /**
   * Requests refused before their operation runs. `json` is the status in application/json
   * (today's) when it differs from the spec's; `outcome`: there, a FHIR OperationOutcome as it
   * always was rather than GraphQL errors.
   */
  const refusals: {
    name: string;
    request: () => Ask;
    status: number;
    code: string;
    message: RegExp;
    json?: { status?: number; outcome?: string };
  }[] = [
    {
      name: 'a body that is not JSON',
      request: () => ({ body: '{"query":' }),
      status: 400,
      code: 'BAD_REQUEST',
      message: /not valid JSON/,
      json: { outcome: 'structure' },
    },
    {
      name: 'a JSON body without a query',
      request: () => ({ body: { qeury: '{ __typename }' } }),
      status: 400,
      code: 'BAD_REQUEST',
      message: /no query/,
    },
    {
      name: 'GET without a query',
      request: () => ({ method: 'GET', path: '/$graphql?operationName=x' }),
      status: 400,
      code: 'BAD_REQUEST',
      message: /no query/,
    },
    {
      name: 'variables that are not an object',
      request: () => query('query Q($i: Int) { __typename }', { variables: [7] }),
      status: 400,
      code: 'BAD_REQUEST',
      message: /variables must be a JSON object/,
    },
    {
      name: 'GET variables that are not JSON',
      request: () => ({ method: 'GET', path: '/$graphql?query=%7B__typename%7D&variables=%7B' }),
      status: 400,
      code: 'BAD_REQUEST',
      message: /variables is not valid JSON/,
    },
    {
      name: 'a body in a media type GraphQL does not read',
      request: () => ({ body: '{ __typename }', contentType: 'text/plain' }),
      status: 415,
      code: 'BAD_REQUEST',
      message: /application\/json or application\/graphql/,
      json: { outcome: 'not-supported' },
    },
    {
      name: `a body over GRAPHIR_MAX_BODY_BYTES`,
      request: () => query(`{ __typename }${' '.repeat(BODY_LIMIT)}`),
      status: 413,
      code: 'QUERY_TOO_COMPLEX',
      message: /larger than/,
      json: { outcome: 'too-costly' },
    },
    {
      name: 'a syntax error',
      request: () => query('{ Patient(id: "p1" { id } }'),
      status: 400,
      code: 'GRAPHQL_PARSE_FAILED',
      message: /^Syntax Error/,
    },
    {
      name: 'an unknown field',
      request: () => query('{ Patient(id: "p1") { colour } }'),
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      message: /Cannot query field "colour"/,
    },
    {
      name: 'a variable of an unknown type',
      request: () => query('query Q($x: Nope) { __typename }'),
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      message: /Unknown type "Nope"/,
    },
    {
      name: 'a page size over the limit',
      request: () => query('{ PatientList(_count: 100000) { id } }'),
      status: 400,
      code: 'QUERY_TOO_COMPLEX',
      message: /maximum page size/,
    },
    {
      name: 'a query nested past the depth limit',
      request: () =>
        query(
          `{ Patient(id: "p1") ${'{ link { other { resource { ... on Patient '.repeat(5)}{ id }${' } } } }'.repeat(5)} }`,
        ),
      status: 400,
      code: 'QUERY_TOO_COMPLEX',
      message: /levels deep/,
    },
    {
      name: 'an operation name that names none',
      request: () => query('query A { __typename }', { operationName: 'B' }),
      status: 400,
      code: 'OPERATION_RESOLUTION_FAILURE',
      message: /Unknown operation named "B"/,
    },
    {
      name: 'several operations and no name',
      request: () => query('query A { __typename } query B { __typename }'),
      status: 400,
      code: 'OPERATION_RESOLUTION_FAILURE',
      message: /Must provide operation name/,
    },
    {
      name: 'a variable value of the wrong type',
      request: () =>
        query('query Q($skip: Boolean!) { __typename @skip(if: $skip) }', {
          variables: { skip: 'yes' },
        }),
      status: 400,
      code: 'BAD_USER_INPUT',
      message: /Variable "\$skip" got invalid value "yes"/,
    },
    {
      name: 'a required variable left out',
      request: () => query('query Q($skip: Boolean!) { __typename @skip(if: $skip) }'),
      status: 400,
      code: 'BAD_USER_INPUT',
      message: /Variable "\$skip" of required type "Boolean!" was not provided/,
    },
    {
      name: 'a mutation over GET',
      request: () => ({
        method: 'GET',
        path: `/$graphql?query=${encodeURIComponent('mutation { PatientDelete(id: "p1") { id } }')}`,
      }),
      status: 405,
      code: 'BAD_REQUEST',
      message: /Mutations need POST/,
      json: { outcome: 'not-supported' },
    },
    {
      name: 'the root client, which reads no FHIR data',
      request: () => ({ ...query('{ __typename }'), token: rootToken }),
      status: 403,
      code: 'FORBIDDEN',
      message: /root client/,
      json: { outcome: 'forbidden' },
    },
    {
      name: 'instance level: a type outside the scopes',
      request: () => ({
        ...query('{ id }'),
        path: '/Patient/p1/$graphql',
        token: observationsOnly,
      }),
      status: 403,
      code: 'FORBIDDEN',
      message: /Patient/,
      json: { outcome: 'forbidden' },
    },
    {
      name: 'instance level: a resource that does not exist',
      request: () => ({ ...query('{ id }'), path: '/Patient/nobody/$graphql' }),
      status: 404,
      code: 'NOT_FOUND',
      message: /Patient\/nobody/,
      json: { outcome: 'not-found' },
    },
    {
      name: 'instance level: a type the server does not know',
      request: () => ({ ...query('{ id }'), path: '/Nope/x/$graphql' }),
      status: 404,
      code: 'NOT_FOUND',
      message: /Nope is not a resource type/,
      json: { outcome: 'not-found' },
    },
  ];
  describe.each(MODES)('refused before execution, in $mode', (mode: Mode) => {
    it.each(refusals)('$name', async ({ request, status, code, message, json }) => {
      const before = await storedVersions(server);
      const answer = await ask({ accept: mode.accept, ...request() });
      const legacy = mode.accept === 'application/json';
      expect(answer.status, JSON.stringify(answer.body)).toBe(
        legacy ? (json?.status ?? status) : status,
      );
      if (legacy && json?.outcome) {
        expect(answer.type).toMatch(/^application\/fhir\+json/);
        expect(answer.body.resourceType).toBe('OperationOutcome');
        expect(answer.body.issue[0]).toMatchObject({ severity: 'error', code: json.outcome });
        expect(answer.body.issue[0].diagnostics).toMatch(message);
      } else {
        expect(answer.type).toBe(`${mode.type}; charset=utf-8`);
        expect(answer.body).not.toHaveProperty('data');
        expect(answer.body.errors.length).toBeGreaterThan(0);
        expect(answer.body.errors[0].message).toMatch(message);
        for (const error of answer.body.errors) {
          expect(error.extensions.code).toBe(code);
          expect(error.extensions.resource.resourceType).toBe('OperationOutcome');
          expect(error.extensions.resource.issue[0].severity).toBe('error');
        }
      }
      expect(await storedVersions(server)).toBe(before);
    });
  });

  describe.each(MODES)('a missing or bad token, in $mode', (mode: Mode) => {
    it.each([
      ['no token', null],
      ['a garbage token', 'not-a-token'],
    ])('%s: 401 with GraphQL errors', async (_name, token) => {
      for (const request of [
        query('{ __typename }'),
        { method: 'GET' as const, path: '/$graphql?query=%7B__typename%7D' },
        { ...query('{ id }'), path: '/Patient/p1/$graphql' },
      ]) {
        const answer = await ask({ ...request, token, accept: mode.accept });
        expect(answer.status).toBe(401);
        expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
        expect(answer.type).toBe(`${mode.type}; charset=utf-8`);
        expect(answer.body).toEqual({
          errors: [
            {
              message: expect.any(String),
              extensions: {
                code: 'UNAUTHENTICATED',
                resource: {
                  resourceType: 'OperationOutcome',
                  issue: [expect.objectContaining({ severity: 'error', code: 'login' })],
                },
              },
            },
          ],
        });
      }
    });

    it('other routes keep the OperationOutcome', async () => {
      const response = await server.fhir('/Patient/p1', {
        token: null,
        headers: { Accept: mode.accept },
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toMatch(/^application\/fhir\+json/);
      expect((await response.json()).issue[0].code).toBe('login');
    });
  });

  /** Field errors: the operation ran, so 200 in both media types, with the data it made. */
  const fieldErrors: {
    name: string;
    request: () => Ask;
    data: unknown;
    path: (string | number)[];
    code: string;
    issue: string;
  }[] = [
    {
      name: 'a read of a resource that does not exist',
      request: () => query('{ Patient(id: "nobody") { id } }'),
      data: { Patient: null },
      path: ['Patient'],
      code: 'NOT_FOUND',
      issue: 'not-found',
    },
    {
      name: 'a reference that resolves to nothing',
      request: () =>
        query('{ Observation(id: "o1") { id subject { resource { ... on Patient { id } } } } }'),
      data: { Observation: { id: 'o1', subject: { resource: null } } },
      path: ['Observation', 'subject', 'resource'],
      code: 'NOT_FOUND',
      issue: 'not-found',
    },
    {
      name: 'a type outside the scopes',
      request: () => ({ ...query('{ PatientList { id } }'), token: observationsOnly }),
      data: { PatientList: null },
      path: ['PatientList'],
      code: 'FORBIDDEN',
      issue: 'forbidden',
    },
    {
      name: 'a search value that is not one',
      request: () => query('{ PatientList(birthdate: "not-a-date") { id } }'),
      data: { PatientList: null },
      path: ['PatientList'],
      code: 'BAD_USER_INPUT',
      issue: 'invalid',
    },
    {
      name: 'a cursor the server never gave out',
      request: () => query('{ PatientConnection(_cursor: "nope") { count } }'),
      data: { PatientConnection: null },
      path: ['PatientConnection'],
      code: 'BAD_USER_INPUT',
      issue: 'invalid',
    },
    {
      name: 'a mutation that takes an identifier another Bot has',
      request: () =>
        query(
          `mutation ($code: String!) { BotCreate(res: { name: "second", code: $code, identifier: [{ system: "${BOT_IDENTIFIER.system}", value: "${BOT_IDENTIFIER.value}" }] }) { id } }`,
          { variables: { code: BOT_CODE } },
        ),
      data: { BotCreate: null },
      path: ['BotCreate'],
      code: 'CONFLICT',
      issue: 'duplicate',
    },
    {
      name: 'a mutation with an invalid resource',
      request: () => query('mutation { PatientCreate(res: { birthDate: "1990-13-45" }) { id } }'),
      data: { PatientCreate: null },
      path: ['PatientCreate'],
      code: 'BAD_USER_INPUT',
      issue: 'value',
    },
  ];

  describe.each(MODES)('field errors, in $mode', (mode: Mode) => {
    it.each(fieldErrors)('$name: 200, data and a coded error', async (c) => {
      const before = await storedVersions(server);
      const answer = await ask({ accept: mode.accept, ...c.request() });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.type).toBe(`${mode.type}; charset=utf-8`);
      expect(answer.body.data).toEqual(c.data);
      expect(answer.body.errors).toHaveLength(1);
      expect(answer.body.errors[0]).toMatchObject({
        path: c.path,
        extensions: {
          code: c.code,
          resource: { resourceType: 'OperationOutcome', issue: [{ code: c.issue }] },
        },
      });
      expect(await storedVersions(server)).toBe(before);
    });
  });

  it('an Apollo-style client reads the message of a 400 from its body', async () => {
    const response = await fetch(`${server.base}/$graphql`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: PREFERS_GRAPHQL_RESPONSE,
        Authorization: `Bearer ${server.project.token}`,
      },
      body: JSON.stringify({ query: 'query GetPatient { Patient(id: "p1") { colour } }' }),
    });
    // As Apollo Client does: the body of a non-2xx graphql-response+json answer is a GraphQL
    // response, whatever the status, so its errors reach the application.
    expect(response.ok).toBe(false);
    expect(response.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    const result = (await response.json()) as {
      data?: unknown;
      errors: { message: string; extensions: { code: string } }[];
    };
    expect(result.data).toBeUndefined();
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0].message).toMatch(/^Cannot query field "colour" on type "Patient"/);
    expect(result.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});
