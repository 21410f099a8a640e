import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** A small, fixed data set; every id is client-assigned so that expectations can name them. */
const resources = [
  {
    resourceType: 'Patient',
    id: 'p1',
    name: [{ use: 'official', family: 'Chalmers', given: ['Peter', 'James'] }],
    gender: 'male',
    birthDate: '1974-12-25',
    address: [{ city: 'PleasantVille', state: 'Vic' }],
    identifier: [{ system: 'urn:mrn', value: 'A1' }],
    active: true,
  },
  {
    resourceType: 'Patient',
    id: 'p2',
    name: [{ family: 'Müller', given: ['Zoë'] }],
    gender: 'female',
    birthDate: '1990-05',
    address: [{ city: 'Boston', state: 'MA' }],
    identifier: [{ system: 'urn:mrn', value: 'B2' }],
  },
  {
    resourceType: 'Patient',
    id: 'p3',
    name: [{ family: 'Chalmersson', given: ['Anna'] }],
    gender: 'female',
    birthDate: '2001-02-03',
    address: [{ city: 'Boston' }],
  },
  {
    resourceType: 'Observation',
    id: 'o1',
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: '29463-7', display: 'Body weight' }] },
    subject: { reference: 'Patient/p1' },
    effectiveDateTime: '2020-03-01T10:00:00Z',
    valueQuantity: { value: 70.5, unit: 'kg', system: 'http://unitsofmeasure.org', code: 'kg' },
  },
  {
    resourceType: 'Observation',
    id: 'o2',
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: '8302-2', display: 'Body height' }] },
    subject: { reference: 'Patient/p2' },
    effectiveDateTime: '2021-06-15',
    valueQuantity: { value: 165, unit: 'cm', system: 'http://unitsofmeasure.org', code: 'cm' },
  },
  {
    resourceType: 'Observation',
    id: 'o3',
    status: 'preliminary',
    code: { text: 'free text only' },
    subject: { reference: 'Patient/p1' },
    effectiveDateTime: '2022-01-01',
  },
  {
    resourceType: 'RiskAssessment',
    id: 'r1',
    status: 'final',
    subject: { reference: 'Patient/p1' },
    prediction: [{ probabilityDecimal: 0.25 }],
  },
  {
    resourceType: 'RiskAssessment',
    id: 'r2',
    status: 'final',
    subject: { reference: 'Patient/p2' },
    prediction: [{ probabilityDecimal: 0.8 }],
  },
];

describe.each(await availableEngines())('FHIR search on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
    const entry = resources.map((resource) => ({
      resource,
      request: { method: 'PUT', url: `${resource.resourceType}/${resource.id}` },
    }));
    const response = await server.fhir('/', {
      method: 'POST',
      body: { resourceType: 'Bundle', type: 'transaction', entry },
    });
    expect(response.status).toBe(200);
  });
  afterAll(() => server?.stop());

  const ids = async (path: string) => {
    const response = await server.fhir(path);
    const bundle = await response.json();
    expect(response.status, JSON.stringify(bundle)).toBe(200);
    return (bundle.entry ?? [])
      .filter((e: { search: { mode: string } }) => e.search.mode === 'match')
      .map((e: { resource: { id: string } }) => e.resource.id)
      .sort();
  };

  it.each([
    ['string: prefix, case-insensitive', '/Patient?name=chalm', ['p1', 'p3']],
    ['string: accent-insensitive', '/Patient?family=muller', ['p2']],
    ['string: :exact', '/Patient?family:exact=Chalmers', ['p1']],
    ['string: :exact is case-sensitive', '/Patient?family:exact=chalmers', []],
    ['string: :exact is accent-sensitive', '/Patient?family:exact=Muller', []],
    ['string: :contains', '/Patient?family:contains=lmerss', ['p3']],
    ['string: address-city', '/Patient?address-city=boston', ['p2', 'p3']],
    ['token: code', '/Patient?gender=female', ['p2', 'p3']],
    ['token: system|code', '/Observation?code=http://loinc.org|29463-7', ['o1']],
    ['token: |code (no system) does not match a coded value', '/Observation?code=|29463-7', []],
    ['token: system|', '/Patient?identifier=urn:mrn|', ['p1', 'p2']],
    ['token: :not', '/Patient?gender:not=female', ['p1']],
    ['token: :text', '/Observation?code:text=body', ['o1', 'o2']],
    ['token: boolean', '/Patient?active=true', ['p1']],
    ['reference: Type/id', '/Observation?subject=Patient/p1', ['o1', 'o3']],
    ['reference: id', '/Observation?subject=p2', ['o2']],
    ['reference: :Type', '/Observation?subject:Patient=p1', ['o1', 'o3']],
    ['date: year precision eq', '/Patient?birthdate=1974', ['p1']],
    ['date: ge', '/Patient?birthdate=ge1990-01-01', ['p2', 'p3']],
    ['date: lt', '/Patient?birthdate=lt1990', ['p1']],
    ['date: month precision value against a day', '/Patient?birthdate=1990-05-20', []],
    ['date: dateTime', '/Observation?date=2020-03-01', ['o1']],
    ['number: gt', '/RiskAssessment?probability=gt0.5', ['r2']],
    ['number: eq with implicit precision', '/RiskAssessment?probability=0.25', ['r1']],
    [
      'quantity: value|system|code',
      '/Observation?value-quantity=70.5|http://unitsofmeasure.org|kg',
      ['o1'],
    ],
    ['quantity: prefix and unit', '/Observation?value-quantity=gt100||cm', ['o2']],
    ['missing=true', '/Observation?value-quantity:missing=true', ['o3']],
    ['missing=false', '/Patient?active:missing=false', ['p1']],
    ['comma is OR', '/Patient?family=Müller,Chalmersson', ['p2', 'p3']],
    [
      'repeated parameter is AND',
      '/Patient?address-city=boston&gender=female&birthdate=gt2000',
      ['p3'],
    ],
    ['_id', '/Patient?_id=p1,p3', ['p1', 'p3']],
    ['_lastUpdated', '/Patient?_lastUpdated=gt2000-01-01', ['p1', 'p2', 'p3']],
  ])('%s', async (_name, path, want) => {
    expect(await ids(path)).toEqual(want);
  });

  it('pages with _count and _offset, with total and links', async () => {
    const page = await (await server.fhir('/Patient?_count=2&_sort=birthdate')).json();
    expect(page.total).toBe(3);
    expect(page.entry.map((e: { resource: { id: string } }) => e.resource.id)).toEqual([
      'p1',
      'p2',
    ]);
    const relations = Object.fromEntries(
      page.link.map((l: { relation: string; url: string }) => [l.relation, l.url]),
    );
    expect(Object.keys(relations).sort()).toEqual(['first', 'last', 'next', 'self']);
    const next = (await (
      await fetch(relations.next, { headers: { Authorization: `Bearer ${server.project.token}` } })
    ).json()) as {
      entry: { resource: { id: string } }[];
    };
    expect(next.entry.map((e: { resource: { id: string } }) => e.resource.id)).toEqual(['p3']);
  });

  it('sorts by several keys, - for descending', async () => {
    const bundle = await (await server.fhir('/Patient?_sort=gender,-birthdate')).json();
    expect(bundle.entry.map((e: { resource: { id: string } }) => e.resource.id)).toEqual([
      'p3',
      'p2',
      'p1',
    ]);
  });

  it('answers _summary=count with only the total, and _total=none without it', async () => {
    const count = await (await server.fhir('/Patient?_summary=count')).json();
    expect(count).toMatchObject({ type: 'searchset', total: 3 });
    expect(count.entry).toBeUndefined();
    const none = await (await server.fhir('/Patient?_total=none')).json();
    expect(none.total).toBeUndefined();
    expect(none.entry).toHaveLength(3);
  });

  it('keeps only the listed elements with _elements, marked SUBSETTED', async () => {
    const bundle = await (await server.fhir('/Patient?_id=p1&_elements=gender')).json();
    const patient = bundle.entry[0].resource;
    expect(Object.keys(patient).sort()).toEqual(['gender', 'id', 'meta', 'resourceType']);
    expect(patient.meta.tag).toContainEqual(expect.objectContaining({ code: 'SUBSETTED' }));
  });

  it('adds referenced resources with _include and referring ones with _revinclude', async () => {
    const included = await (
      await server.fhir('/Observation?_id=o1&_include=Observation:subject')
    ).json();
    expect(
      included.entry.map(
        (e: { resource: { id: string }; search: { mode: string } }) =>
          `${e.search.mode}:${e.resource.id}`,
      ),
    ).toEqual(['match:o1', 'include:p1']);
    const revincluded = await (
      await server.fhir('/Patient?_id=p2&_revinclude=Observation:subject')
    ).json();
    expect(
      revincluded.entry.map(
        (e: { resource: { id: string }; search: { mode: string } }) =>
          `${e.search.mode}:${e.resource.id}`,
      ),
    ).toEqual(['match:p2', 'include:o2']);
  });

  it('searches by POST _search with a form body', async () => {
    const response = await fetch(`${server.base}/Patient/_search`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Bearer ${server.project.token}`,
      },
      body: 'gender=male',
    });
    const bundle = (await response.json()) as { entry: { resource: { id: string } }[] };
    expect(bundle.entry.map((e) => e.resource.id)).toEqual(['p1']);
  });

  it.each([
    ['an unknown parameter', '/Patient?colour=red', /colour is not a search parameter of Patient/],
    ['a malformed date', '/Patient?birthdate=1974-13-01', /birthdate/],
    ['an unknown prefix', '/Patient?birthdate=xx1974', /prefix/],
    ['a modifier that does not apply', '/Patient?gender:exact=male', /:exact does not apply/],
    [
      'a composite parameter',
      '/Observation?code-value-quantity=x$1',
      /composite search parameters are not supported/,
    ],
    ['full-text search', '/Patient?_content=x', /_content is not supported/],
    ['a bad _count', '/Patient?_count=-1', /_count/],
    ['an unknown _sort key', '/Patient?_sort=colour', /not a sortable/],
    ['a malformed _include', '/Patient?_include=nonsense', /_include/],
    ['SQL in a value', "/Patient?name=x'; DROP TABLE resource; --&gender=a%25_", null],
  ])('answers %s with 400 (or safely)', async (_name, path, message) => {
    const response = await server.fhir(path);
    const body = await response.json();
    if (message === null) {
      expect(response.status).toBe(200);
      expect(body.total).toBe(0);
      return;
    }
    expect(response.status).toBe(400);
    expect(body.resourceType).toBe('OperationOutcome');
    expect(body.issue[0].diagnostics).toMatch(message);
  });
});
