/**
 * Bots whose code cannot reach the web platform run in isolates without its globals defined
 * (bot-preludes.ts, the plain set); the web platform is still there for the `fhir` client, and
 * for every way code reaches a global by a name it does not spell out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preludesFor } from '../../runtime/bots/bot-preludes.js';
import type { Prelude } from '../../runtime/bots/sandbox-types.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

function kindOf(preludes: readonly Prelude[]): string {
  if (preludes.some((prelude) => typeof prelude === 'string')) return 'eager';
  return preludes.every((prelude) => typeof prelude !== 'string' && prelude.deferred)
    ? 'plain'
    : 'lazy';
}

describe('preludesFor', () => {
  it.each([
    [
      'an echo module',
      'export async function handler(fhir, event) { return event.input; }',
      'plain',
    ],
    [
      'a module calling its client',
      'export const handler = (m) => m.searchOne("Patient", "name=a");',
      'plain',
    ],
    [
      'a module naming a global',
      'export async function handler() { return new URL("http://a"); }',
      'lazy',
    ],
    [
      'a module naming a locale method',
      'export const handler = () => (1).toLocaleString("de");',
      'lazy',
    ],
    [
      'a module reading globalThis',
      'export const handler = (f, e) => globalThis[e.input];',
      'lazy',
    ],
    ['a module using eval', 'export const handler = (f, e) => eval(e.input);', 'lazy'],
    ['a module using constructor', 'export const handler = () => ({}).constructor;', 'lazy'],
    [
      'CommonJS, whose functions see the global as this',
      'exports.handler = async () => 1;',
      'lazy',
    ],
    ['a module naming Hl7', 'export const handler = () => Hl7Message;', 'eager'],
  ])('%s: %s set', (_, code, kind) => {
    expect(kindOf(preludesFor(false, code))).toBe(kind);
  });

  it('HL7 input always gets the eager set', () => {
    expect(kindOf(preludesFor(true, 'export const handler = (f, e) => e.input;'))).toBe('eager');
  });
});

describe('bots without the web platform ahead', () => {
  let server: TestServer;

  async function execute(code: string, input: unknown = {}): Promise<unknown> {
    const created = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', name: 'plain', code },
    });
    const { id } = await created.json();
    const response = await server.fhir(`/Bot/${id}/$execute`, {
      method: 'POST',
      body: JSON.stringify(input),
      headers: { 'Content-Type': 'application/json' },
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${response.status} ${text}`);
    // A string answers as text, anything else as JSON.
    return response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
  }

  beforeAll(async () => {
    server = await startTestServer('pglite');
    await server.fhir('/Patient', {
      method: 'POST',
      body: { resourceType: 'Patient', gender: 'female', name: [{ family: 'Plain' }] },
    });
  });
  afterAll(() => server?.stop());

  it('have a client whose searches and URLs use the web platform', async () => {
    const code = `export async function handler(medplum) {
      const found = await medplum.searchResources('Patient', { gender: 'female', _count: '5' });
      return { names: found.map((p) => p.name[0].family), url: medplum.fhirUrl('Patient', 'x').toString() };
    }`;
    expect(kindOf(preludesFor(false, code))).toBe('plain');
    const answer = (await execute(code)) as { names: string[]; url: string };
    expect(answer.names).toEqual(['Plain']);
    expect(answer.url).toMatch(/\/fhir\/R4\/Patient\/x$/);
  });

  it.each([
    ['globalThis with a computed name', `return typeof globalThis['Text' + 'Encoder'];`],
    ['eval of built text', `return eval('typeof ' + 'Text' + 'Encoder');`],
    ['the Function constructor', `return typeof Function('return this')()['Text' + 'Encoder'];`],
    [
      'a constructor’s constructor',
      `return typeof ({}).constructor.constructor('return this')()['Text' + 'Encoder'];`,
    ],
  ])('reach a global by a name they compute through %s', async (_, body) => {
    expect(await execute(`export async function handler() { ${body} }`)).toBe('function');
  });

  it('reach a global as CommonJS through a function’s this', async () => {
    const code = `exports.handler = async () => typeof (function () { return this; })()['Text' + 'Encoder'];`;
    expect(await execute(code)).toBe('function');
  });
});
