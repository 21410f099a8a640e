/**
 * Bots that use Hl7Message run in isolates with the class compiled ahead; the others compile it
 * on first use. Both kinds, interleaved on the same workers, behave alike, and neither keeps
 * anything a bot did to its globals or to the class.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const ADT = readFileSync('test/fixtures/hl7/adt-a01.hl7', 'utf8');

/** Names the class, so it gets an isolate with the class compiled; then tampers with it. */
const NAMING = `export async function handler(fhir, event) {
  const seen = { leak: typeof globalThis.leak, ack: Hl7Message.parse(event.input.er7).buildAck().toString().slice(0, 4) };
  globalThis.leak = 1;
  Hl7Message.prototype.buildAck = () => 'tampered';
  return seen;
}`;
/** Reaches the class without naming it: it is compiled on first use. Then tampers with it. */
const UNNAMED = `export async function handler(fhir, event) {
  const Hl7 = globalThis['Hl7' + 'Mess' + 'age'];
  const seen = { leak: typeof globalThis.leak, ack: Hl7.parse(event.input.er7).buildAck().toString().slice(0, 4) };
  globalThis.leak = 1;
  Hl7.prototype.buildAck = () => 'tampered';
  return seen;
}`;
/** Gets an Hl7Message as its input and answers with one. */
const ACK = `export async function handler(fhir, event) {
  const answer = event.input.buildAck();
  event.input.constructor.prototype.buildAck = () => 'tampered';
  return answer;
}`;

describe('bots with and without Hl7Message compiled ahead', () => {
  let server: TestServer;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer('pglite');
    for (const [name, code] of Object.entries({ NAMING, UNNAMED, ACK })) {
      const response = await server.fhir('/Bot', {
        method: 'POST',
        body: { resourceType: 'Bot', code },
      });
      ids[name] = (await response.json()).id;
    }
  });
  afterAll(() => server?.stop());

  it('run interleaved, each with fresh globals and a fresh class', async () => {
    const json = JSON.stringify({ er7: ADT });
    for (let round = 0; round < 6; round++) {
      for (const name of ['NAMING', 'UNNAMED']) {
        const response = await server.fhir(`/Bot/${ids[name]}/$execute`, {
          method: 'POST',
          body: json,
          headers: { 'Content-Type': 'application/json' },
        });
        expect(response.status, name).toBe(200);
        expect(await response.json(), name).toEqual({ leak: 'undefined', ack: 'MSH|' });
      }
      const ack = await server.fhir(`/Bot/${ids.ACK}/$execute`, {
        method: 'POST',
        body: ADT,
        headers: { 'Content-Type': 'x-application/hl7-v2+er7' },
      });
      expect(ack.status).toBe(200);
      expect(ack.headers.get('content-type')).toContain('x-application/hl7-v2+er7');
      expect(await ack.text()).toMatch(/^MSH\|.*\rMSA\|AA\|/s);
    }
  });
});
