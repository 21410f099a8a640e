/**
 * The AuditEvent of an execution is written after the response, in a batch; a request that may
 * read it, sent after that response, must still find it (runtime/http/audit-visibility.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe.each(await availableEngines())('AuditEvents of executions, on %s', (engine) => {
  let server: TestServer;
  let botId: string;

  beforeAll(async () => {
    server = await startTestServer(engine);
    const created = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', code: 'export async function handler() { return "ok"; }' },
    });
    botId = (await created.json()).id;
  });
  afterAll(() => server?.stop());

  const execute = async () => {
    const response = await server.fhir(`/Bot/${botId}/$execute`, {
      method: 'POST',
      body: 'x',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(response.status).toBe(200);
    return response.headers.get('X-Trace-Id')!;
  };
  const traceIdsOf = (
    events: { entity: { detail: { type: string; valueString: string }[] }[] }[],
  ) =>
    events.flatMap((event) =>
      event.entity[0].detail.filter((d) => d.type === 'trace-id').map((d) => d.valueString),
    );
  const searchRest = async () => {
    const bundle = await (await server.fhir(`/AuditEvent?entity=Bot/${botId}&_count=1000`)).json();
    return traceIdsOf((bundle.entry ?? []).map((e: { resource: unknown }) => e.resource));
  };
  const searchGraphql = async () => {
    const response = await server.fhir('/$graphql', {
      method: 'POST',
      body: JSON.stringify({
        query: `{ AuditEventList(entity: "Bot/${botId}", _count: 1000) { entity { detail { type valueString } } } }`,
      }),
      headers: { 'Content-Type': 'application/json' },
    });
    const body = await response.json();
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    return traceIdsOf(body.data.AuditEventList);
  };

  it('are found by a REST search sent right after the response', async () => {
    for (let i = 0; i < 5; i++) {
      const traceId = await execute();
      expect(await searchRest()).toContain(traceId);
    }
  });

  it('are found by a GraphQL query sent right after the response', async () => {
    for (let i = 0; i < 5; i++) {
      const traceId = await execute();
      expect(await searchGraphql()).toContain(traceId);
    }
  });

  it('are found by a search of the Bot that includes them with _revinclude', async () => {
    for (let i = 0; i < 5; i++) {
      const traceId = await execute();
      const bundle = await (
        await server.fhir(`/Bot?_id=${botId}&_revinclude=AuditEvent:entity`)
      ).json();
      const events = (bundle.entry ?? [])
        .map((e: { resource: { resourceType: string } }) => e.resource)
        .filter((r: { resourceType: string }) => r.resourceType === 'AuditEvent');
      expect(traceIdsOf(events)).toContain(traceId);
    }
  });

  it("are found by a bot's fhir client, in the execution right after", async () => {
    const created = await server.fhir('/Bot', {
      method: 'POST',
      body: {
        resourceType: 'Bot',
        code: `export async function handler(fhir, event) {
          const events = await fhir.searchResources('AuditEvent', 'entity=Bot/' + event.input + '&_count=1000');
          return events.flatMap((e) => e.entity[0].detail).filter((d) => d.type === 'trace-id').map((d) => d.valueString);
        }`,
      },
    });
    const reader = (await created.json()).id;
    for (let i = 0; i < 5; i++) {
      const traceId = await execute();
      const response = await server.fhir(`/Bot/${reader}/$execute`, {
        method: 'POST',
        body: botId,
        headers: { 'Content-Type': 'text/plain' },
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toContain(traceId);
    }
  });

  it('are found while other executions keep running, and the search does not wait for theirs', async () => {
    let running = true;
    const background = async () => {
      while (running) await execute();
    };
    const loops = [background(), background(), background()];
    try {
      for (let i = 0; i < 5; i++) {
        const traceId = await execute();
        // It waits for the AuditEvents queued before it, never for the executions that keep
        // coming after it (it would then never be answered while the loops run).
        expect(await searchRest()).toContain(traceId);
      }
    } finally {
      running = false;
      await Promise.all(loops);
    }
  });
});
