/**
 * Hostile input to Bot `$execute`, by media type: HL7 v2 with broken separators and segments,
 * text that is not JSON, JSON with the keys parsers trip on, forms with repeated, empty and
 * prototype-named keys, FHIR resources valid and broken, unsupported media types, bodies past the
 * limit. Input that does not parse as its Content-Type says gets 400 (unsupported types 415,
 * oversize 413) with an OperationOutcome before any bot runs: no AuditEvent is written. Input
 * that parses reaches the bot exactly as the contract says, and its run is audited.
 *
 * What a bot sees of a form (`application/x-www-form-urlencoded`, and a GET's query): the body
 * read as the WHATWG URL standard reads forms (`+` is a space, a broken escape stays as written,
 * a key without `=` has the value ""), then an object with each key's first value — a repeated
 * key keeps its first, an empty key is a key like any other, and so are `__proto__`,
 * `constructor` and `toString`: they are the client's keys, not JavaScript's.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { expectOutcome, send, sendRaw, tryInputs, type Answer } from './hostile-harness.js';
import { patientCase } from './hostile-patients.js';

const HL7 = 'x-application/hl7-v2+er7';
const ADT = readFileSync('test/fixtures/hl7/adt-a01.hl7', 'utf8').replace(/\r?\n/g, '\r');
/** Echoes what it was given: its kind, the input (an Hl7Message written back) and the type. */
const ECHO = `export async function handler(fhir, event) {
  const input = event.input;
  const hl7 = input instanceof Hl7Message;
  const seen = { kind: hl7 ? 'hl7' : typeof input, input: hl7 ? input.toString() : input, contentType: event.contentType };
  return seen;
}`;

/** The object of first values a bot must see for a form body or query string. */
function firstValues(form: string, ignored: readonly string[] = []): Record<string, string> {
  const first = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(form))
    if (!ignored.includes(key) && !first.has(key)) first.set(key, value);
  // fromEntries makes each key an own property, `__proto__` included.
  return Object.fromEntries(first);
}

/** Keys the JSON body parser refuses outright (prototype pollution), at any depth. */
function hasForbiddenKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  for (const [key, child] of Object.entries(value)) {
    if (key === '__proto__') return true;
    if (
      key === 'constructor' &&
      child !== null &&
      typeof child === 'object' &&
      'prototype' in child
    )
      return true;
    if (hasForbiddenKey(child)) return true;
  }
  return false;
}

describe.each(await availableEngines())('hostile input to bots on %s', (engine) => {
  let server: TestServer;
  let botId: string;
  beforeAll(async () => {
    server = await startTestServer(engine);
    const response = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', name: 'echo', code: ECHO },
    });
    botId = (await response.json()).id;
  });
  afterAll(() => server?.stop());

  // node:http: fetch would add `Content-Type: text/plain` to a body sent without one.
  const execute = (body: string | undefined, contentType?: string, query = '') =>
    sendRaw(server.url, `/fhir/R4/Bot/${botId}/$execute${query}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        Authorization: `Bearer ${server.project.token}`,
        ...(contentType === undefined ? {} : { 'Content-Type': contentType }),
      },
      body,
    });
  /** Bot runs so far: one AuditEvent each, written just after the response. */
  const audits = async () => {
    await server.settled();
    const { rows } = await server.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM resource WHERE project_id = $1 AND resource_type = 'AuditEvent'",
      [server.project.projectId],
    );
    return Number(rows[0].n);
  };
  /** Refused before any bot ran: the status, an OperationOutcome, and no new AuditEvent. */
  const expectRefusedBeforeRunning = async (answer: Answer, statuses: number[], before: number) => {
    expectOutcome(answer, statuses);
    expect(await audits()).toBe(before);
  };
  const expectRan = async (answer: Answer, before: number) => {
    expect(answer.status, answer.text.slice(0, 300)).toBe(200);
    expect(await audits()).toBe(before + 1);
    return (answer.body ?? JSON.parse(answer.text)) as {
      kind: string;
      input: unknown;
      contentType: string;
    };
  };

  it('HL7 with broken separators, segments and bytes: 400 before running unless it starts with MSH', async () => {
    const edit = fc.oneof(
      fc.record({
        kind: fc.constant('field separator' as const),
        to: fc.string({ unit: 'binary', maxLength: 2 }),
      }),
      fc.record({
        kind: fc.constant('encoding characters' as const),
        to: fc.string({ unit: 'binary', maxLength: 6 }),
      }),
      fc.record({
        kind: fc.constant('segment terminators' as const),
        to: fc.constantFrom('\n', '\r\n', '', '|', '\u0000', '\r\r'),
      }),
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
      fc.record({
        kind: fc.constant('insert' as const),
        at: fc.nat(),
        text: fc.string({ unit: 'binary', maxLength: 8 }),
      }),
      fc.record({
        kind: fc.constant('prefix' as const),
        text: fc.constantFrom('\ufeff', ' ', '\r', 'msh', 'PID|1\r', 'MSH'),
      }),
      fc.record({ kind: fc.constant('separators only' as const), n: fc.nat({ max: 5000 }) }),
    );
    const tally = await tryInputs(
      `HL7 messages with broken separators (${engine})`,
      fc.array(edit, { minLength: 1, maxLength: 3 }),
      async (edits, tally) => {
        let message = ADT;
        for (const e of edits) {
          if (e.kind === 'field separator') message = message.slice(0, 3) + e.to + message.slice(4);
          else if (e.kind === 'encoding characters')
            message = message.slice(0, 4) + e.to + message.slice(8);
          else if (e.kind === 'segment terminators') message = message.replaceAll('\r', e.to);
          else if (e.kind === 'truncate') message = message.slice(0, e.at % (message.length + 1));
          else if (e.kind === 'insert') {
            const at = e.at % (message.length + 1);
            message = message.slice(0, at) + e.text + message.slice(at);
          } else if (e.kind === 'prefix') message = e.text + message;
          else message = `MSH|^~\\&|${'|^~&'.repeat(e.n)}`;
        }
        const before = await audits();
        const answer = await execute(message, HL7);
        // What must start with MSH is the first segment: a byte order mark, MLLP framing
        // (\v … \x1c) and blank lines around segments are no part of the message.
        const firstSegment =
          message
            .replace(/^[\ufeff\v]+/, '')
            .split(/\r\n|\r|\n/)
            .find((line) => !/^[\s\x1c]*$/.test(line)) ?? '';
        if (!firstSegment.startsWith('MSH')) {
          await expectRefusedBeforeRunning(answer, [400], before);
          tally.add('refused: no MSH');
        } else if (answer.status === 400) {
          // A message the parser cannot read (an MSH too short, encoding characters missing).
          await expectRefusedBeforeRunning(answer, [400], before);
          tally.add('refused: unreadable MSH');
        } else {
          const echoed = await expectRan(answer, before);
          expect(echoed.kind).toBe('hl7');
          expect(String(echoed.input).startsWith('MSH')).toBe(true);
          tally.add('ran');
        }
      },
      120,
    );
    expect(tally.count('ran')).toBeGreaterThan(0);
    expect(tally.count('refused: no MSH') + tally.count('refused: unreadable MSH')).toBeGreaterThan(
      0,
    );
  });

  it('text as application/json: 400 before running unless it is a JSON object or array', async () => {
    const keys = fc.constantFrom(
      'a',
      '',
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      '__hl7',
      'é𝄞',
      '\u0000',
    );
    const value = fc.letrec((tie) => ({
      json: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue({ maxDepth: 1 }),
        fc.array(tie('json'), { maxLength: 3 }),
        fc.dictionary(keys, tie('json'), { maxKeys: 3 }),
      ),
    })).json;
    const text = fc.oneof(
      value.map((v) => JSON.stringify(v)),
      fc.json().map((json) => json.slice(0, -1)),
      fc
        .tuple(fc.json(), fc.constantFrom('x', ',', '}', ']', '\u0000', '//', ' '))
        .map(([j, s]) => j + s),
      fc.string({ unit: 'binary', maxLength: 60 }),
    );
    const tally = await tryInputs(
      `text as application/json (${engine})`,
      text,
      async (body, tally) => {
        let parsed: unknown;
        let readable = true;
        try {
          parsed = JSON.parse(body.replace(/^\ufeff/, ''));
        } catch {
          readable = false;
        }
        // The body parser takes objects and arrays only; it may refuse prototype-polluting keys.
        const object = readable && parsed !== null && typeof parsed === 'object';
        const before = await audits();
        const answer = await execute(body, 'application/json');
        if (!object || (hasForbiddenKey(parsed) && answer.status === 400)) {
          await expectRefusedBeforeRunning(answer, [400], before);
          tally.add('refused');
        } else {
          const echoed = await expectRan(answer, before);
          // The bot sees the value itself; -0 is 0 once written as JSON again.
          expect(echoed.input).toEqual(JSON.parse(JSON.stringify(parsed)));
          expect(echoed.kind).toBe('object');
          tally.add('ran');
        }
      },
      150,
    );
    expect(tally.count('ran')).toBeGreaterThan(0);
    expect(tally.count('refused')).toBeGreaterThan(0);
  });

  it('forms and queries with repeated, empty and prototype-named keys: the first value of each', async () => {
    const key = fc.oneof(
      fc.constantFrom(
        'a',
        'b',
        '',
        '__proto__',
        'constructor',
        'toString',
        'hasOwnProperty',
        'valueOf',
        '__hl7',
        'identifier',
      ),
      fc.string({ unit: 'binary', maxLength: 6 }),
    );
    const value = fc.oneof(
      fc.constantFrom('', '1', 'two words', 'MSH|^~\\&|X', '&', '=', '+', '%', 'é𝄞', '\u0000'),
      fc.string({ unit: 'binary', maxLength: 8 }),
    );
    const pair = fc
      .tuple(key, value, fc.constantFrom('escaped', 'raw', 'no ='))
      .map(([k, v, how]) =>
        how === 'escaped'
          ? `${encodeURIComponent(k)}=${encodeURIComponent(v)}`
          : how === 'raw'
            ? `${k}=${v}`
            : encodeURIComponent(k),
      );
    const form = fc.record({
      body: fc.array(pair, { maxLength: 8 }).map((pairs) => pairs.join('&')),
      get: fc.boolean(),
    });
    const tally = await tryInputs(
      `form bodies and queries (${engine})`,
      form,
      async ({ body, get }, tally) => {
        const before = await audits();
        // Raw pairs may hold what a URL cannot: a GET sends them escaped, as a browser would.
        const query = get ? `?${new URLSearchParams(firstPairs(body)).toString()}` : '';
        const answer = get
          ? await execute(undefined, undefined, query)
          : await execute(body, 'application/x-www-form-urlencoded');
        const echoed = await expectRan(answer, before);
        expect(echoed.kind).toBe('object');
        // A GET's `identifier` names the bot (contract), so it is no input.
        expect(echoed.input).toEqual(
          get ? firstValues(query.slice(1), ['identifier']) : firstValues(body),
        );
        tally.add(get ? 'GET' : 'POST');
      },
      150,
    );
    expect(tally.count('POST')).toBeGreaterThan(0);
  });

  it('FHIR resources, valid and broken, reach the bot as parsed: validation guards only what is stored', async () => {
    const tally = await tryInputs(
      `FHIR resources as application/fhir+json (${engine})`,
      patientCase,
      async ({ patient, broken }, tally) => {
        const before = await audits();
        const answer = await execute(JSON.stringify(patient), 'application/fhir+json');
        expect((await expectRan(answer, before)).input).toEqual(
          JSON.parse(JSON.stringify(patient)),
        );
        tally.add(broken ? 'broken, ran' : 'valid, ran');
      },
      80,
    );
    expect(tally.count('broken, ran')).toBeGreaterThan(0);
    expect(tally.count('valid, ran')).toBeGreaterThan(0);
  });

  it.each([
    [
      'a JSON object with __hl7',
      '{"__hl7":"MSH|^~\\\\&|A|B"}',
      'application/json',
      { __hl7: 'MSH|^~\\&|A|B' },
    ],
    [
      'a form with __hl7',
      '__hl7=garbage',
      'application/x-www-form-urlencoded',
      { __hl7: 'garbage' },
    ],
    [
      'a form with __proto__ and toString',
      '__proto__=x&toString=y&a=1&a=2',
      'application/x-www-form-urlencoded',
      firstValues('__proto__=x&toString=y&a=1'),
    ],
    ['text with U+0000', 'a\u0000b', 'text/plain', 'a\u0000b'],
    ['JSON after a byte order mark', '\ufeff{"a":1}', 'application/json', { a: 1 }],
    [
      'FHIR JSON of no resource type',
      '{"resourceType":"NotAType"}',
      'application/fhir+json',
      { resourceType: 'NotAType' },
    ],
    ['FHIR JSON that is an array', '[{"a":1}]', 'application/fhir+json', [{ a: 1 }]],
  ] as [string, string, string, unknown][])(
    '%s reaches the bot as it is, typed by its Content-Type',
    async (_name, body, contentType, input) => {
      const before = await audits();
      const echoed = await expectRan(await execute(body, contentType), before);
      expect(echoed.input).toEqual(input);
      expect(echoed.contentType).toBe(contentType);
    },
  );

  it('whatever a bot throws or logs (U+0000, unpaired surrogates, nothing), its run is audited', async () => {
    const response = await server.fhir('/Bot', {
      method: 'POST',
      body: {
        resourceType: 'Bot',
        name: 'thrower',
        code: 'export async function handler(fhir, event) { const { log, message } = JSON.parse(event.input); console.log(log); throw new Error(message); }',
      },
    });
    const thrower = (await response.json()).id;
    const text = fc.oneof(
      fc.constantFrom('', '\u0000', 'a\ud800b', '\udc00', `${'x'.repeat(8191)}😀`, ' '),
      fc.string({ unit: 'binary', maxLength: 30 }),
      fc.string({ unit: fc.constantFrom('\ud800', '\udfff', '\u0000', 'a', '😀'), maxLength: 10 }),
    );
    const tally = await tryInputs(
      `bots throwing and logging hostile text (${engine})`,
      fc.record({ log: text, message: text }),
      async (input, tally) => {
        const before = await audits();
        const answer = await send(`${server.base}/Bot/${thrower}/$execute`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${server.project.token}`,
            'Content-Type': 'text/plain',
          },
          // JSON escapes keep unpaired surrogates intact on the way in.
          body: JSON.stringify(input),
        });
        expectOutcome(answer, [400]);
        expect(answer.body.issue[0].code).toBe('processing');
        expect(await audits()).toBe(before + 1);
        tally.add('audited');
      },
      60,
    );
    expect(tally.count('audited')).toBeGreaterThan(0);
  });

  it.each([
    ['HL7 not starting with MSH', 'PID|1||x', HL7, 400],
    ['empty HL7', '', HL7, 400],
    ['HL7 in lower case', ADT.toLowerCase(), HL7, 400],
    ['an MSH segment too short', 'MSH|^~', HL7, 400],
    ['empty JSON', '', 'application/json', 400],
    ['JSON that is a string', '"text"', 'application/json', 400],
    ['JSON with a __proto__ key', '{"__proto__":{"polluted":true}}', 'application/json', 400],
    ['JSON nested 100000 deep', '['.repeat(100_000) + ']'.repeat(100_000), 'application/json', 400],
    ['no Content-Type', 'x', undefined, 415],
    ['a garbage Content-Type', 'x', ';;;', 415],
    ['text/html', '<p>', 'text/html', 415],
    ['application/xml', '<a/>', 'application/xml', 415],
    ['application/fhir+xml', '<Patient/>', 'application/fhir+xml', 415],
    ['multipart/form-data', '--x--', 'multipart/form-data; boundary=x', 415],
  ] as [string, string, string | undefined, number][])(
    '%s: %s before any bot runs',
    async (_name, body, contentType, status) => {
      const before = await audits();
      await expectRefusedBeforeRunning(await execute(body, contentType), [status], before);
    },
  );

  it.each([
    ['text/plain', 'x'.repeat(2000)],
    ['application/json', JSON.stringify({ a: 'x'.repeat(2000) })],
    ['application/x-www-form-urlencoded', `a=${'x'.repeat(2000)}`],
    [HL7, `MSH|^~\\&|${'x'.repeat(2000)}`],
  ])('a %s body past the size limit: 413 before any bot runs', async (contentType, body) => {
    const small = await startTestServer(engine, { GRAPHIR_MAX_BODY_BYTES: '1000' });
    try {
      const bot = await small.fhir('/Bot', {
        method: 'POST',
        body: { resourceType: 'Bot', code: ECHO },
      });
      const answer = await send(`${small.base}/Bot/${(await bot.json()).id}/$execute`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${small.project.token}`, 'Content-Type': contentType },
        body,
      });
      expectOutcome(answer, [413]);
      await small.settled();
      const { rows } = await small.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM resource WHERE resource_type = 'AuditEvent'",
      );
      expect(Number(rows[0].n)).toBe(0);
    } finally {
      await small.stop();
    }
  });
});

/** Each pair of a raw form body, as the form parser splits it. */
function firstPairs(body: string): [string, string][] {
  return [...new URLSearchParams(body)];
}
