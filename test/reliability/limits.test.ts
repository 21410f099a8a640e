/**
 * Every limit that protects the server, at the limit and one step past it: at it the request is
 * served; past it, it is refused with the status the contract names and an OperationOutcome (or
 * a GraphQL error), and nothing is stored. LIMITS lists them all with where each is tested: here
 * (each `describe` below takes its title from the table, and a check makes sure every row has
 * one), or in the named tests of another file (checked to exist, so the pointer cannot go stale).
 *
 * Engines: page sizes and resource ids go through the store and run on every engine. The others
 * are enforced before the database is reached — by the body parser, Node's HTTP parser, the
 * GraphQL limits on the parsed query, the sandbox and the admin routes' checks — so they run
 * once, on PGlite; there the database only records what a request did, which `storedVersions`
 * reads the same way on both engines.
 *
 * Not listed, because no client can move them or they are no limit on a request: the QuickJS
 * stack (256 KiB; past it a bot gets "stack overflow", test/bots/sandbox.test.ts), the bot
 * worker's Node heap backstop and deadline grace (sandbox-pool.ts), GRAPHIR_BOT_WORKERS (a pool
 * size), GRAPHIR_TOKEN_LIFETIME_SECONDS. There is no limit on requests per client.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONSOLE_CAP_CHARS,
  CONSOLE_LINE_CHARS,
  ConsoleTail,
} from '../../runtime/bots/sandbox-console.js';
import {
  FHIRPATH_CACHE_CAPACITY,
  cachedFhirPaths,
  compileFhirPath,
} from '../../runtime/graphql/compile-fhirpath.js';
import { storedVersions } from '../support/stored-versions.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

interface Limit {
  readonly limit: string;
  readonly setting: string;
  readonly default: string;
  /** What a request one step past the limit gets. */
  readonly past: string;
  /** `here`, or a file and the titles of its tests at and past the limit. */
  readonly testedIn: 'here' | readonly [file: string, ...tests: string[]];
}

const GRAPHQL_LIMITS_TEST = 'test/graphql/graphql-http.test.ts';
const QUERY_SIZE_TEST = 'test/graphql/query-size.test.ts';
const FHIRPATH_TEST = 'test/graphql/fhirpath-budget.test.ts';
const FAIRNESS_TEST = 'test/bots/fairness.test.ts';
const LIMITS: readonly Limit[] = [
  {
    limit: 'request body',
    setting: 'GRAPHIR_MAX_BODY_BYTES',
    default: '16 MiB',
    past: '413 too-costly',
    testedIn: 'here',
  },
  {
    limit: 'transaction Bundle entries',
    setting: 'none of its own: the body size bounds it',
    default: '-',
    past: '413 too-costly',
    testedIn: 'here',
  },
  {
    limit: 'request line and headers',
    setting: "Node's --max-http-header-size (URL, header names and values)",
    default: '16 KiB',
    past: '431 too-costly',
    testedIn: 'here',
  },
  {
    limit: 'search page without _count',
    setting: 'GRAPHIR_DEFAULT_PAGE_SIZE',
    default: '20',
    past: 'that many, and a next link',
    testedIn: 'here',
  },
  {
    limit: 'REST _count',
    setting: 'GRAPHIR_MAX_PAGE_SIZE',
    default: '1000',
    past: 'capped at the maximum (FHIR lets a server return fewer than _count)',
    testedIn: 'here',
  },
  {
    limit: 'GraphQL _count',
    setting: 'GRAPHIR_MAX_PAGE_SIZE',
    default: '1000',
    past: '400 with errors, no data',
    testedIn: 'here',
  },
  {
    limit: 'GraphQL query cost',
    setting: 'GRAPHIR_GRAPHQL_MAX_COST',
    default: '100000',
    past: '400 with errors, no data',
    testedIn: 'here',
  },
  {
    limit: 'GraphQL query depth',
    setting: 'GRAPHIR_GRAPHQL_MAX_DEPTH',
    default: '15',
    past: '400 with errors, no data',
    testedIn: [GRAPHQL_LIMITS_TEST, 'depth: 4 levels', 'depth: 5 levels'],
  },
  {
    limit: 'GraphQL searches per query',
    setting: 'GRAPHIR_GRAPHQL_MAX_SEARCHES',
    default: '20',
    past: '400 with errors, no data',
    testedIn: [GRAPHQL_LIMITS_TEST, 'searches: 2 is the limit', 'searches: 3 is past it'],
  },
  {
    limit: 'bot time',
    setting: 'GRAPHIR_BOT_TIMEOUT_SECONDS (no Bot.timeout), Bot.timeout',
    default: '10 s',
    past: '408 timeout',
    testedIn: 'here',
  },
  {
    limit: 'longest Bot.timeout',
    setting: 'GRAPHIR_BOT_MAX_TIMEOUT_SECONDS',
    default: '60 s',
    past: 'capped at the maximum: 408 timeout there',
    testedIn: 'here',
  },
  {
    limit: 'bot memory',
    setting: 'GRAPHIR_BOT_MEMORY_MB',
    default: '64 MiB',
    past: '400 too-costly',
    testedIn: 'here',
  },
  {
    limit: 'bot console',
    setting: 'a line in the sandbox; the tail kept in the AuditEvent; per execution, per line',
    default: '4096 chars; 4000 chars; 64 KiB, 8 KiB',
    past: 'truncated, marked; oldest dropped; oldest lines dropped, marked',
    testedIn: 'here',
  },
  {
    limit: 'compiled FHIRPath expressions kept',
    setting: 'FHIRPATH_CACHE_CAPACITY (GraphQL fhirpath: arguments, @slice paths)',
    default: '500',
    past: 'the least recently used is dropped',
    testedIn: 'here',
  },
  {
    limit: 'resource id',
    setting: 'FHIR id',
    default: '64 characters',
    past: '400 value',
    testedIn: 'here',
  },
  {
    limit: 'JSON nesting',
    setting: 'MAX_JSON_NESTING in runtime/model/json-nesting.ts (objects and arrays)',
    default: '500 levels',
    past: '400 structure',
    testedIn: 'here',
  },
  {
    limit: 'GraphQL nesting',
    setting: 'MAX_NESTING in runtime/graphql/query-shape.ts (braces, brackets, parentheses)',
    default: '500 levels',
    past: '400 with errors, before parsing',
    testedIn: 'here',
  },
  {
    limit: 'GraphQL query text',
    setting: 'GRAPHIR_GRAPHQL_MAX_QUERY_BYTES',
    default: '256 KiB',
    past: '400 with errors, before parsing',
    testedIn: [QUERY_SIZE_TEST, 'query bytes: at the limit', 'query bytes: one past it'],
  },
  {
    limit: 'GraphQL tokens',
    setting: 'GRAPHIR_GRAPHQL_MAX_TOKENS (comments left out)',
    default: '20,000',
    past: '400 with errors, before parsing',
    testedIn: [QUERY_SIZE_TEST, 'tokens: at the limit', 'tokens: one past it'],
  },
  {
    limit: 'FHIRPath expression',
    setting: 'MAX_FHIRPATH_CHARS in runtime/graphql/compile-fhirpath.ts',
    default: '1,000 characters',
    past: 'the field null with an error',
    testedIn: [
      FHIRPATH_TEST,
      'an expression as long as the limit',
      'an expression one character longer',
    ],
  },
  {
    limit: 'FHIRPath time per query',
    setting: 'GRAPHIR_GRAPHQL_FHIRPATH_BUDGET_MS',
    default: '50 ms',
    past: 'the field null with an error',
    testedIn: [
      FHIRPATH_TEST,
      'within the budget',
      'past the budget: the field fails, and the server keeps answering',
    ],
  },
  {
    limit: "a project's bot executions",
    setting: 'GRAPHIR_BOT_PROJECT_CONCURRENCY at once, GRAPHIR_BOT_PROJECT_QUEUE waiting',
    default: 'one worker fewer than GRAPHIR_BOT_WORKERS; 100',
    past: '429 throttled with Retry-After',
    testedIn: [
      FAIRNESS_TEST,
      'runs at most `concurrency` of a project, queues `queued`, refuses the rest',
    ],
  },
  {
    limit: 'admin names',
    setting: 'secret name; project name, client name and scope',
    default: '100; 1000 characters',
    past: '400 invalid; 400 required',
    testedIn: 'here',
  },
];
/** Settings in runtime/server/config.ts that are no limit on a request. */
const NOT_LIMITS = [
  'GRAPHIR_ROOT_CLIENT_ID',
  'GRAPHIR_ROOT_CLIENT_SECRET',
  'GRAPHIR_TOKEN_LIFETIME_SECONDS',
  'GRAPHIR_BOT_WORKERS',
  'GRAPHIR_BASE_URL',
  'GRAPHIR_CORS_ORIGINS',
  // Where a bot's fetch may connect: a policy, tested in test/bots/bot-fetch.test.ts.
  'GRAPHIR_EGRESS_ALLOW',
  // Background jobs, after the request: test/jobs/.
  'GRAPHIR_JOBS_CONCURRENCY',
  'GRAPHIR_JOBS_POLL_INTERVAL_MS',
  'GRAPHIR_JOBS_MAX_ATTEMPTS',
  // How many server processes (test/server/processes.test.ts), and where the web app's files are.
  'GRAPHIR_PROCESSES',
  'GRAPHIR_APP_DIR',
];

const described = new Set<string>();
/** A describe title from the table (and a note that the row has its tests). */
function limit(name: string): string {
  const row = LIMITS.find((l) => l.limit === name);
  if (!row || row.testedIn !== 'here') throw new Error(`${name} is not a limit tested here`);
  described.add(name);
  return `${row.limit} (${row.setting}, default ${row.default}): past it, ${row.past}`;
}

describe('the table of limits', () => {
  it('names every setting of runtime/server/config.ts that limits a request', () => {
    const settings = new Set(
      readFileSync('runtime/server/config.ts', 'utf8').match(/GRAPHIR_\w+/g),
    );
    const listed = LIMITS.flatMap((l) => l.setting.match(/GRAPHIR_\w+/g) ?? []);
    expect([...settings].filter((s) => !NOT_LIMITS.includes(s) && !listed.includes(s))).toEqual([]);
  });

  it.each(LIMITS.filter((l) => l.testedIn !== 'here').map((l) => [l.limit, l.testedIn]))(
    '%s: the tests it names exist',
    (_name, testedIn) => {
      const [file, ...tests] = testedIn as readonly string[];
      const source = readFileSync(file, 'utf8');
      for (const test of tests) expect(source).toContain(`'${test}'`);
    },
  );

  it('has tests here for every limit it says are tested here', () => {
    expect(LIMITS.filter((l) => l.testedIn === 'here' && !described.has(l.limit))).toEqual([]);
  });
});

const MiB = 1024 * 1024;
const BODY_LIMIT = 2000;
const MEMORY_MB = 16;

/** Limits enforced before the store: one server, on PGlite. */
describe('limits enforced before the store', () => {
  let server: TestServer;
  let echoBot: string;
  beforeAll(async () => {
    server = await startTestServer('pglite', {
      GRAPHIR_MAX_BODY_BYTES: String(BODY_LIMIT),
      GRAPHIR_GRAPHQL_MAX_COST: '500',
      GRAPHIR_BOT_TIMEOUT_SECONDS: '1',
      GRAPHIR_BOT_MAX_TIMEOUT_SECONDS: '2',
      GRAPHIR_BOT_MEMORY_MB: String(MEMORY_MB),
    });
    echoBot = await createBot('export async function handler(fhir, event) { return "ok"; }');
    // Warm the sandbox pool, so that no bot below pays for starting a worker.
    expect((await execute(echoBot, 'warm')).status).toBe(200);
  });
  afterAll(() => server?.stop());

  async function createBot(code: string, timeout?: number): Promise<string> {
    const response = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', code, ...(timeout ? { timeout } : {}) },
    });
    expect(response.status).toBe(201);
    return (await response.json()).id;
  }
  const execute = (id: string, body: string, contentType = 'text/plain') =>
    server.fhir(`/Bot/${id}/$execute`, {
      method: 'POST',
      body,
      headers: { 'Content-Type': contentType },
    });

  /** `levels` arrays, one inside the other. */
  const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

  describe(limit('JSON nesting'), () => {
    // The body is level 1 and `variables` level 2: the arrays take the levels from 3 on.
    const body = (levels: number) =>
      `{"query":"{ __typename }","variables":{"unused":${nested(levels - 2)}}}`;
    const sendJson = (levels: number) =>
      server.fhir('/$graphql', {
        method: 'POST',
        body: body(levels),
        headers: { 'Content-Type': 'application/json' },
      });
    it('at the limit: read', async () => {
      const response = await sendJson(500);
      expect(response.status).toBe(200);
      expect((await response.json()).data).toEqual({ __typename: 'Query' });
    });
    it('one past: 400', async () => {
      const response = await sendJson(501);
      expect(response.status).toBe(400);
      expect((await response.json()).issue[0].diagnostics).toMatch(/more than 500 levels/);
    });
  });

  describe(limit('GraphQL nesting'), () => {
    // `{` and `(` are two levels; the list value takes the rest.
    const query = (levels: number) => `{ PatientList(name: ${nested(levels - 2)}) { id } }`;
    const send = (levels: number) =>
      server.fhir('/$graphql', {
        method: 'POST',
        body: query(levels),
        headers: { 'Content-Type': 'application/graphql' },
      });
    it('at the limit: parsed (then refused by validation, not for its nesting)', async () => {
      const response = await send(500);
      const { errors } = await response.json();
      expect(errors.length).toBeGreaterThan(0);
      expect(errors[0].message).not.toMatch(/nests/);
    });
    it('one past: 400 before parsing', async () => {
      const response = await send(501);
      expect(response.status).toBe(400);
      expect((await response.json()).errors[0].message).toMatch(/more than 500 deep/);
    });
  });

  describe(limit('request body'), () => {
    /** `text` and spaces after it, `bytes` long: JSON and GraphQL allow the spaces. */
    const padded = (text: string, bytes: number) => text + ' '.repeat(bytes - text.length);
    const hl7 = 'MSH|^~\\&|LAB|ACME|EHR|HOSP|20260101120000||ADT^A01|MSG1|P|2.5\rNTE|1||';
    const cases: [string, () => string, string, (bytes: number) => string, number][] = [
      [
        'a create',
        () => '/Patient',
        'application/fhir+json',
        (n) => padded(JSON.stringify({ resourceType: 'Patient', active: true }), n),
        201,
      ],
      [
        'a GraphQL query as JSON',
        () => '/$graphql',
        'application/json',
        (n) => padded(JSON.stringify({ query: '{ PatientList(_count: 1) { id } }' }), n),
        200,
      ],
      [
        'a GraphQL query as application/graphql',
        () => '/$graphql',
        'application/graphql',
        (n) => padded('{ PatientList(_count: 1) { id } }', n),
        200,
      ],
      [
        'a POST _search form',
        () => '/Patient/_search',
        'application/x-www-form-urlencoded',
        (n) => `name=${'x'.repeat(n - 5)}`,
        200,
      ],
      [
        'a bot input as text',
        () => `/Bot/${echoBot}/$execute`,
        'text/plain',
        (n) => 'x'.repeat(n),
        200,
      ],
      [
        'a bot input as JSON',
        () => `/Bot/${echoBot}/$execute`,
        'application/json',
        (n) => padded('{"a":1}', n),
        200,
      ],
      [
        'a bot input as a form',
        () => `/Bot/${echoBot}/$execute`,
        'application/x-www-form-urlencoded',
        (n) => `a=${'x'.repeat(n - 2)}`,
        200,
      ],
      [
        'a bot input as HL7 v2',
        () => `/Bot/${echoBot}/$execute`,
        'x-application/hl7-v2+er7',
        (n) => hl7 + 'x'.repeat(n - hl7.length),
        200,
      ],
    ];
    it.each(cases)('%s', async (_name, path, contentType, body, status) => {
      const at = body(BODY_LIMIT);
      expect(Buffer.byteLength(at)).toBe(BODY_LIMIT);
      const send = (text: string) =>
        server.fhir(path(), {
          method: 'POST',
          body: text,
          headers: { 'Content-Type': contentType },
        });
      const served = await send(at);
      expect(served.status, await served.clone().text()).toBe(status);
      await server.settled();
      const before = await storedVersions(server);
      await expectRefused(await send(body(BODY_LIMIT + 1)), 413, 'too-costly');
      await server.settled(); // a bot that ran would have left an AuditEvent by now
      expect(await storedVersions(server)).toBe(before);
    });

    it('a create sent in chunks, without Content-Length', async () => {
      const send = (bytes: number) =>
        fetch(`${server.base}/Patient`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/fhir+json',
            Authorization: `Bearer ${server.project.token}`,
          },
          body: new ReadableStream({
            start(controller) {
              const text = padded('{"resourceType":"Patient"}', bytes);
              for (let i = 0; i < text.length; i += 500)
                controller.enqueue(new TextEncoder().encode(text.slice(i, i + 500)));
              controller.close();
            },
          }),
          duplex: 'half',
        } as RequestInit);
      expect((await send(BODY_LIMIT)).status).toBe(201);
      const before = await storedVersions(server);
      await expectRefused(await send(BODY_LIMIT + 1), 413, 'too-costly');
      expect(await storedVersions(server)).toBe(before);
    });
  });

  describe(limit('transaction Bundle entries'), () => {
    it('as many entries as fit in the body size: all stored; one byte more: none', async () => {
      const entry = {
        request: { method: 'POST', url: 'Patient' },
        resource: { resourceType: 'Patient' },
      };
      const bundle = (entries: number) => ({
        resourceType: 'Bundle',
        type: 'transaction',
        entry: Array.from({ length: entries }, () => entry),
      });
      let entries = 1;
      while (JSON.stringify(bundle(entries + 1)).length <= BODY_LIMIT) entries++;
      const text = JSON.stringify(bundle(entries));
      const at = text + ' '.repeat(BODY_LIMIT - text.length);
      const send = (body: string) => server.fhir('/', { method: 'POST', body });
      const before = await storedVersions(server);
      const served = await send(at);
      expect(served.status).toBe(200);
      expect((await served.json()).entry).toHaveLength(entries);
      expect(await storedVersions(server)).toBe(before + entries);
      await expectRefused(await send(`${at} `), 413, 'too-costly');
      expect(await storedVersions(server)).toBe(before + entries);
    });
  });

  describe(limit('GraphQL query cost'), () => {
    // A search costs 10 plus its page size times the fields it selects; any other field 1.
    it.each([
      ['at it: 10 + 245 × 2 = 500', '{ PatientList(_count: 245) { id gender } }', 200],
      ['past it: __typename adds 1', '{ __typename PatientList(_count: 245) { id gender } }', 400],
    ])('%s', async (_name, query, status) => {
      const response = await graphql(server, query);
      const body = await response.json();
      if (status === 200) {
        expect(response.status).toBe(200);
        expect(body.errors).toBeUndefined();
        expect(Array.isArray(body.data.PatientList)).toBe(true);
      } else {
        expectGraphqlRefusal(response, body, /estimated cost is 501; the maximum is 500/);
      }
    });
  });

  describe(limit('request line and headers'), () => {
    // Node counts the URL, the header names and the header values (not the spaces, colons and
    // line ends) and refuses the request when they reach 16 KiB.
    const MAX = 16 * 1024 - 1;
    it.each([
      ['at it', MAX, 200],
      ['past it', MAX + 1, 431],
    ])('%s', async (_name, counted, status) => {
      const { status: got, type, body } = await rawRequest(server.url, '/healthz', counted);
      expect(got).toBe(status);
      if (status === 431) {
        expect(type).toMatch(/^application\/fhir\+json/);
        expect(JSON.parse(body)).toMatchObject({
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'too-costly' }],
        });
      }
    });
  });

  // The server's default bot time is 1 s and its maximum 2 s. The bot waits as long as it is asked.
  const BUSY =
    'export async function handler(fhir, event) { const end = Date.now() + Number(event.input); while (Date.now() < end) {} return "done"; }';
  async function expectRun(timeout: number | undefined, ms: number, status: number) {
    const response = await execute(await createBot(BUSY, timeout), String(ms));
    if (status === 200) expect(await response.text()).toBe('done');
    else await expectRefused(response, 408, 'timeout');
  }

  describe(limit('bot time'), () => {
    it.each([
      ['no Bot.timeout: 0.6 s of the default 1 s runs', undefined, 600, 200],
      ['no Bot.timeout: 1.4 s, past the default, is stopped', undefined, 1400, 408],
      ['Bot.timeout 2 s: 1.4 s, past the default but not its own, runs', 2, 1400, 200],
      ['Bot.timeout 2 s: 2.4 s, past its own, is stopped', 2, 2400, 408],
    ])('%s', async (_name, timeout, ms, status) => expectRun(timeout, ms, status));
  });

  describe(limit('longest Bot.timeout'), () => {
    it.each([
      ['Bot.timeout 2 s, the maximum: 1.4 s runs', 2, 1400, 200],
      ['Bot.timeout 3 s is held to 2 s: 2.4 s is stopped', 3, 2400, 408],
    ])('%s', async (_name, timeout, ms, status) => expectRun(timeout, ms, status));
  });

  describe(limit('bot memory'), () => {
    const ALLOCATE =
      'export async function handler(fhir, event) { const bytes = new Uint8Array(Number(event.input)); bytes[bytes.length - 1] = 1; return bytes.length; }';
    it(`${MEMORY_MB - 1} MiB of ${MEMORY_MB} runs; ${MEMORY_MB} MiB and the runtime's own is stopped, and the next bot runs`, async () => {
      const id = await createBot(ALLOCATE);
      const under = await execute(id, String((MEMORY_MB - 1) * MiB));
      expect(await under.text()).toBe(String((MEMORY_MB - 1) * MiB));
      const over = await execute(id, String(MEMORY_MB * MiB));
      await expectRefused(over, 400, 'too-costly');
      expect((await execute(echoBot, 'after')).status).toBe(200);
      await server.settled();
      const audit = await auditOf(over.headers.get('X-Trace-Id')!);
      expect(detail(audit, 'status')).toBe('memory');
    });
  });

  describe(limit('bot console'), () => {
    const LOG =
      'export async function handler(fhir, event) { console.log(event.input.first + "x".repeat(event.input.length - 1)); }';
    let logger: string;
    beforeAll(async () => {
      logger = await createBot(LOG);
    });
    const logged = async (first: string, length: number) => {
      const response = await execute(logger, JSON.stringify({ first, length }), 'application/json');
      expect(response.status).toBe(200);
      await server.settled();
      return detail(await auditOf(response.headers.get('X-Trace-Id')!), 'console');
    };

    it('a line of 4096 characters is kept whole, of 4097 cut there and marked', async () => {
      expect(await logged('x', 4096)).toBe('x'.repeat(4000));
      const cut = await logged('x', 4097);
      expect(cut).toMatch(/^x+… \(truncated\)$/);
      expect(cut).toHaveLength(4000);
    });

    it('the AuditEvent keeps 4000 characters of output: the last ones', async () => {
      expect(await logged('a', 4000)).toBe(`a${'x'.repeat(3999)}`);
      expect(await logged('a', 4001)).toBe('x'.repeat(4000));
    });

    it('per execution, 64 KiB of lines are kept; past that the oldest go, with a note', () => {
      const line = 'y'.repeat(CONSOLE_CAP_CHARS / 8 - 1); // with its line end, 1/8 of the cap
      const tail = new ConsoleTail();
      for (let i = 0; i < 8; i++) tail.push(line);
      expect(tail.text()).toBe(Array(8).fill(line).join('\n'));
      tail.push('');
      expect(tail.text()).toBe(`… (1 earlier lines dropped)\n${Array(7).fill(line).join('\n')}\n`);
    });

    it('per line, 8 KiB are kept; past that the line is cut and marked', () => {
      const tail = new ConsoleTail();
      tail.push('z'.repeat(CONSOLE_LINE_CHARS));
      tail.push('z'.repeat(CONSOLE_LINE_CHARS + 1));
      const z = 'z'.repeat(CONSOLE_LINE_CHARS);
      expect(tail.text()).toBe(`${z}\n${z}… (truncated)`);
    });
  });

  describe(limit('admin names'), () => {
    const count = async (table: string) =>
      Number(
        (await server.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n,
      );
    const asRoot = async (method: string, path: string, body: unknown) =>
      server.call(path, { method, body, token: await server.rootToken() });

    it('a secret name of 100 characters is stored, of 101 refused', async () => {
      const path = (n: number) =>
        `/admin/projects/${server.project.projectId}/secrets/${'s'.repeat(n)}`;
      expect((await asRoot('PUT', path(100), { value: 'v' })).status).toBe(201);
      const before = await count('project_secret');
      await expectRefused(await asRoot('PUT', path(101), { value: 'v' }), 400, 'invalid');
      expect(await count('project_secret')).toBe(before);
    });

    it('a project name of 1000 characters is stored, of 1001 refused', async () => {
      expect((await asRoot('POST', '/admin/projects', { name: 'p'.repeat(1000) })).status).toBe(
        201,
      );
      const before = await count('project');
      await expectRefused(
        await asRoot('POST', '/admin/projects', { name: 'p'.repeat(1001) }),
        400,
        'required',
      );
      expect(await count('project')).toBe(before);
    });
  });

  async function auditOf(traceId: string): Promise<Record<string, any>> {
    const bundle = await (await server.fhir('/AuditEvent?_count=1000')).json();
    const audit = bundle.entry
      .map((e: { resource: unknown }) => e.resource)
      .find((a: Record<string, any>) => detail(a, 'trace-id') === traceId);
    expect(audit, `no AuditEvent for trace ${traceId}`).toBeDefined();
    return audit;
  }
});

describe(limit('compiled FHIRPath expressions kept'), () => {
  it('all of 500 are kept; with one more, the least recently used goes', async () => {
    const expression = (i: number) => `given.where($this = 'n${i}').exists()`;
    const compile = (i: number) => compileFhirPath(expression(i), 'HumanName');
    const first = await compile(0);
    const second = await compile(1);
    for (let i = 2; i < FHIRPATH_CACHE_CAPACITY; i++) await compile(i);
    expect(cachedFhirPaths()).toBe(FHIRPATH_CACHE_CAPACITY);
    expect(await compile(0)).toBe(first); // kept, and now the most recently used
    await compile(FHIRPATH_CACHE_CAPACITY);
    expect(cachedFhirPaths()).toBe(FHIRPATH_CACHE_CAPACITY);
    expect(await compile(0)).toBe(first);
    expect(await compile(1)).not.toBe(second); // dropped, so compiled again
  });
});

/** Limits the store answers for: every engine. */
describe.each(await availableEngines())('%s: limits answered by the store', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine, {
      GRAPHIR_DEFAULT_PAGE_SIZE: '2',
      GRAPHIR_MAX_PAGE_SIZE: '3',
    });
    const patients = [...Array(2).fill('Pair'), ...Array(3).fill('Trio')].map((family) => ({
      request: { method: 'POST', url: 'Patient' },
      resource: { resourceType: 'Patient', name: [{ family }] },
    }));
    const loaded = await server.fhir('/', {
      method: 'POST',
      body: { resourceType: 'Bundle', type: 'transaction', entry: patients },
    });
    expect(loaded.status).toBe(200);
  });
  afterAll(() => server?.stop());

  const search = async (query: string) => {
    const response = await server.fhir(`/Patient?${query}`);
    expect(response.status).toBe(200);
    const bundle = await response.json();
    const next = bundle.link.find((l: { relation: string }) => l.relation === 'next');
    return { entries: bundle.entry?.length ?? 0, next: next?.url as string | undefined };
  };

  describe(limit('search page without _count'), () => {
    it('2 matches: one page of 2; 3 matches: 2 and a next link', async () => {
      expect(await search('family=Pair')).toEqual({ entries: 2, next: undefined });
      const trio = await search('family=Trio');
      expect(trio.entries).toBe(2);
      expect(trio.next).toMatch(/_count=2/);
      const body = await (await graphql(server, '{ PatientList(family: "Trio") { id } }')).json();
      expect(body.data.PatientList).toHaveLength(2);
    });
  });

  describe(limit('REST _count'), () => {
    it('_count=3 gives 3 of 5; _count=4 gives 3 too, and pages on by 3', async () => {
      expect((await search('_count=3')).entries).toBe(3);
      const past = await search('_count=4');
      expect(past.entries).toBe(3);
      expect(past.next).toMatch(/_count=3/);
    });
  });

  describe(limit('GraphQL _count'), () => {
    it('_count: 3 gives 3', async () => {
      const body = await (await graphql(server, '{ PatientList(_count: 3) { id } }')).json();
      expect(body.errors).toBeUndefined();
      expect(body.data.PatientList).toHaveLength(3);
    });
    it.each([
      ['a literal', '{ PatientList(_count: 4) { id } }', {}],
      ['a variable', 'query ($n: Int) { PatientConnection(_count: $n) { count } }', { n: 4 }],
      [
        'a reverse reference',
        '{ PatientList(_count: 1) { id ObservationList(_reference: subject, _count: 4) { id } } }',
        {},
      ],
    ])('_count 4 as %s is refused', async (_name, query, variables) => {
      const response = await graphql(server, query, variables);
      expectGraphqlRefusal(
        response,
        await response.json(),
        /_count 4 is over the maximum page size of 3/,
      );
    });
  });

  describe(limit('resource id'), () => {
    it('an id of 64 characters is stored, of 65 refused', async () => {
      const put = (id: string) =>
        server.fhir(`/Patient/${id}`, { method: 'PUT', body: { resourceType: 'Patient', id } });
      const at = 'i'.repeat(64);
      expect((await put(at)).status).toBe(201);
      expect((await server.fhir(`/Patient/${at}`)).status).toBe(200);
      const before = await storedVersions(server);
      await expectRefused(await put('i'.repeat(65)), 400, 'value');
      expect(await storedVersions(server)).toBe(before);
    });
  });
});

function graphql(server: TestServer, query: string, variables: Record<string, unknown> = {}) {
  return server.fhir('/$graphql', {
    method: 'POST',
    body: JSON.stringify({ query, variables }),
    headers: { 'Content-Type': 'application/json' },
  });
}

function expectGraphqlRefusal(response: Response, body: any, message: RegExp): void {
  expect(response.status).toBe(400);
  expect(body.data).toBeUndefined();
  expect(body.errors[0].message).toMatch(message);
  expect(body.errors[0].extensions.resource.resourceType).toBe('OperationOutcome');
}

async function expectRefused(response: Response, status: number, code: string): Promise<void> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(JSON.parse(text)).toMatchObject({ resourceType: 'OperationOutcome', issue: [{ code }] });
}

function detail(audit: Record<string, any>, type: string): string | undefined {
  return audit.entity[0].detail.find((d: { type: string }) => d.type === type)?.valueString;
}

/**
 * A GET over a bare socket, padded with one header so that its URL, header names and values
 * come to `counted` bytes: the measure of Node's header size limit.
 */
function rawRequest(
  url: string,
  path: string,
  counted: number,
): Promise<{ status: number; type: string; body: string }> {
  const { hostname, port } = new URL(url);
  const fixed = [
    ['Host', hostname],
    ['Connection', 'close'],
  ];
  const used = path.length + fixed.reduce((n, [k, v]) => n + k.length + v.length, 0) + 5;
  const headers = [...fixed, ['X-Pad', 'p'.repeat(counted - used)]];
  const request = `GET ${path} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let response = '';
    socket.on('data', (chunk) => (response += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, body = ''] = response.split('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]),
        type: /^content-type: (.*)$/im.exec(head)?.[1] ?? '',
        body,
      });
    });
  });
}
