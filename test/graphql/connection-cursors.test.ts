/**
 * Every cursor a `…Connection` gives out leads to the page it names, for every page size
 * (`_count: 0` included, which asks for the total alone, as REST's `_count=0` does) and every
 * starting offset, on root connections and on reverse-reference ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const IDS = ['cc0', 'cc1', 'cc2', 'cc3', 'cc4'];
const OBSERVATIONS = IDS.map((id) => `obs-${id}`);
const FIELDS = 'count offset pageSize first previous next last edges { resource { id } }';

interface Connection {
  count: number;
  offset: number;
  pageSize: number;
  first: string | null;
  previous: string | null;
  next: string | null;
  last: string | null;
  edges: { resource: { id: string } }[];
}

interface Paging {
  _count: number;
  _offset?: number;
  _cursor?: string | null;
}

const FORMS = [
  {
    form: 'PatientConnection',
    ids: IDS,
    query: `query ($_count: Int, $_offset: Int, $_cursor: String) {
      PatientConnection(_sort: "_id", _count: $_count, _offset: $_offset, _cursor: $_cursor) { ${FIELDS} }
    }`,
    connection: (data: any): Connection => data.PatientConnection,
  },
  {
    form: 'ObservationConnection(_reference: subject)',
    ids: OBSERVATIONS,
    query: `query ($_count: Int, $_offset: Int, $_cursor: String) {
      Patient(id: cc0) {
        ObservationConnection(_reference: subject, _sort: "_id", _count: $_count, _offset: $_offset, _cursor: $_cursor) { ${FIELDS} }
      }
    }`,
    connection: (data: any): Connection => data.Patient.ObservationConnection,
  },
];

describe.each(await availableEngines())('connection cursors on %s', (engine) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(engine);
    const entry = [
      ...IDS.map((id) => ({ resourceType: 'Patient', id })),
      ...OBSERVATIONS.map((id) => ({
        resourceType: 'Observation',
        id,
        status: 'final',
        code: { text: 'weight' },
        subject: { reference: 'Patient/cc0' },
      })),
    ].map((resource) => ({
      resource,
      request: { method: 'PUT', url: `${resource.resourceType}/${resource.id}` },
    }));
    const loaded = await server.fhir('/', {
      method: 'POST',
      body: { resourceType: 'Bundle', type: 'transaction', entry },
    });
    expect(loaded.status).toBe(200);
  });
  afterAll(() => server?.stop());

  describe.each(FORMS)('$form', ({ ids, query, connection }) => {
    const fetchPage = async (variables: Paging): Promise<Connection> => {
      const response = await server.fhir('/$graphql', {
        method: 'POST',
        body: JSON.stringify({ query, variables }),
        headers: { 'Content-Type': 'application/json' },
      });
      const body = await response.json();
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(body.errors, JSON.stringify(variables)).toBeUndefined();
      return connection(body.data);
    };
    const idsOf = (page: Connection) => page.edges.map((e) => e.resource.id);

    it.each([0, 1, 2, 3, 5, 6])(
      '_count: %i, from every offset: each cursor given out leads to its page',
      async (count) => {
        for (const offset of [0, 1, 3, 5, 7]) {
          const page = await fetchPage({ _count: count, _offset: offset });
          expect(page).toMatchObject({ count: ids.length, offset, pageSize: count });
          expect(idsOf(page)).toEqual(ids.slice(offset, offset + count));
          const want: Record<string, number | undefined> = {
            first: 0,
            previous: count > 0 && offset > 0 ? Math.max(0, offset - count) : undefined,
            next: count > 0 && offset + count < ids.length ? offset + count : undefined,
            last: count > 0 ? Math.floor((ids.length - 1) / count) * count : undefined,
          };
          for (const [relation, start] of Object.entries(want)) {
            const cursor = page[relation as keyof Connection] as string | null;
            if (start === undefined) {
              expect(cursor, `${relation} at offset ${offset}`).toBeNull();
              continue;
            }
            expect(typeof cursor, `${relation} at offset ${offset}`).toBe('string');
            const target = await fetchPage({ _count: count, _cursor: cursor });
            expect(target.offset, `${relation} at offset ${offset}`).toBe(start);
            expect(idsOf(target)).toEqual(ids.slice(start, start + count));
          }
        }
      },
    );

    it('walks from first to last by next, and back by previous, seeing each result once', async () => {
      const seen: string[] = [];
      let page = await fetchPage({ _count: 2, _cursor: null });
      const last = page.last;
      for (;;) {
        seen.push(...idsOf(page));
        if (!page.next) break;
        page = await fetchPage({ _count: 2, _cursor: page.next });
      }
      expect(seen).toEqual(ids);
      expect(page.offset).toBe((await fetchPage({ _count: 2, _cursor: last })).offset);
      const back: string[] = [];
      for (;;) {
        back.unshift(...idsOf(page));
        if (!page.previous) break;
        page = await fetchPage({ _count: 2, _cursor: page.previous });
      }
      expect(back).toEqual(ids);
    });
  });
});
