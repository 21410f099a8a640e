/**
 * Searches of several criteria, one a token value, in last-update order: pages walked along the
 * token value's rows (runtime/store/search-sql-walk.ts) must be the pages of every match sorted,
 * as the join gives them, whichever source answers. The data set is laid out so that each way a
 * walk ends is taken, and each case checks which source answered its first page, so that the
 * cases keep covering both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSearchDefinition } from '../../generated/search/index.js';
import { parseSearchRequest } from '../../runtime/rest/search-request.js';
import { buildSearchQuery } from '../../runtime/store/search-sql.js';
import { postGraphQL } from '../support/graphql-post.js';
import { explain, walkedPageSource } from '../support/search-plans.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** Patients written per transaction Bundle: the entries of one share their last update. */
const BUNDLE = 10;
const MALES = 200;
const FEMALES = 200;
const OTHERS = 10;

interface Patient {
  readonly resourceType: 'Patient';
  readonly id: string;
  readonly gender: string;
  readonly active: boolean;
  readonly address: readonly { readonly city: string }[];
  readonly meta?: { readonly lastUpdated: string };
}

/**
 * Male at rank r among the males, newest first (the walk's order for gender=male). With pages of
 * 5 (a walk of at most 80 males, its first 64 a sample that must match 4 times): Boston every
 * third; Denver 4 in the sample and none after it within the bound, then 11 more; Rareville too
 * rare to walk for; Springfield none among the newest, one old.
 */
function maleCity(rank: number): string {
  if ([2, 10, 29, 50].includes(rank) || (rank >= 99 && rank < 110)) return 'Denver';
  if (rank === 150 || rank === 151) return 'Rareville';
  if (rank === 190) return 'Springfield';
  return rank % 3 === 0 ? 'Boston' : 'Austin';
}

/** Female at rank r, newest first: enough in Springfield and Denver for both to be walked for. */
function femaleCity(rank: number): string {
  if (rank < 85) return 'Springfield';
  if (rank < 155) return 'Denver';
  if (rank === 155) return 'Rareville';
  return rank < 190 ? 'Boston' : 'Austin';
}

/** The Patients in the order written, oldest first: males and females alternate, then others. */
function writtenPatients(): Patient[] {
  const genders = [
    ...Array.from({ length: MALES + FEMALES }, (_, i) => (i % 2 === 0 ? 'male' : 'female')),
    ...Array.from({ length: OTHERS }, () => 'other'),
  ];
  // Newest first: later Bundles first, and within one Bundle (one last update) by id.
  const newestFirst = genders
    .map((_, i) => i)
    .sort((a, b) => Math.floor(b / BUNDLE) - Math.floor(a / BUNDLE) || a - b);
  const rank = new Map<number, number>();
  for (const gender of ['male', 'female', 'other']) {
    newestFirst.filter((i) => genders[i] === gender).forEach((i, r) => rank.set(i, r));
  }
  return genders.map((gender, i) => ({
    resourceType: 'Patient',
    id: `pt-${String(i).padStart(3, '0')}`,
    gender,
    active: i % 4 !== 3,
    address: [
      {
        city:
          gender === 'male'
            ? maleCity(rank.get(i)!)
            : gender === 'female'
              ? femaleCity(rank.get(i)!)
              : 'Boston',
      },
    ],
  }));
}

/** Newest first, then by id: the order of a search without `_sort`. */
function newestFirst(a: Patient, b: Patient): number {
  return b.meta!.lastUpdated.localeCompare(a.meta!.lastUpdated) || byId(a, b);
}

/** Ids compare byte by byte (the "C" collation): these are ASCII. */
function byId(a: Patient, b: Patient): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Oldest first, then by id: the order of `_sort=_lastUpdated`. */
function oldestFirst(a: Patient, b: Patient): number {
  return a.meta!.lastUpdated.localeCompare(b.meta!.lastUpdated) || byId(a, b);
}

const LIMITS = { defaultCount: 20, maxCount: 1000 };

describe.each(await availableEngines())('walked search pages on %s', (engine) => {
  let server: TestServer;
  /** Every Patient as stored at the end, newest first. */
  let stored: Patient[];

  beforeAll(async () => {
    server = await startTestServer(engine);
    const written = writtenPatients();
    for (let start = 0; start < written.length; start += BUNDLE) {
      const entry = written.slice(start, start + BUNDLE).map((resource) => ({
        resource,
        request: { method: 'PUT', url: `Patient/${resource.id}` },
      }));
      const response = await server.fhir('/', {
        method: 'POST',
        body: { resourceType: 'Bundle', type: 'transaction', entry },
      });
      expect(response.status).toBe(200);
      // The next Bundle a later last update than this one's.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    // Deleted: two of the newest Boston males. Replaced, so newest: two old Boston males as
    // they were, one Boston male moved to Austin, one Austin male moved to Boston.
    const byId = new Map(written.map((patient) => [patient.id, patient]));
    const males = written
      .filter((p) => p.gender === 'male')
      .sort((a, b) => b.id.localeCompare(a.id));
    const boston = males.filter((p) => p.address[0].city === 'Boston');
    const austin = males.filter((p) => p.address[0].city === 'Austin');
    for (const gone of boston.slice(0, 2)) {
      expect((await server.fhir(`/Patient/${gone.id}`, { method: 'DELETE' })).status).toBe(200);
    }
    const replaced = [
      ...boston.slice(-2),
      { ...boston[3], address: [{ city: 'Austin' }] },
      { ...austin[0], address: [{ city: 'Boston' }] },
    ];
    for (const patient of replaced) {
      expect(byId.has(patient.id)).toBe(true);
      const response = await server.fhir(`/Patient/${patient.id}`, {
        method: 'PUT',
        body: patient,
      });
      expect(response.status).toBe(200);
    }
    const all = await (await server.fhir('/Patient?_count=1000')).json();
    stored = all.entry.map((e: { resource: Patient }) => e.resource).sort(newestFirst);
    expect(stored).toHaveLength(MALES + FEMALES + OTHERS - 2);
  });
  afterAll(() => server?.stop());

  /** The source that answers the search's page (REST query string, without the type). */
  async function pageSource(query: string): Promise<string | undefined> {
    const request = parseSearchRequest('Patient', new URLSearchParams(query), LIMITS);
    const definition = loadSearchDefinition('Patient');
    const sql = buildSearchQuery(server.project.projectId, definition, request.criteria, request);
    return walkedPageSource(await explain(server.database.db, sql));
  }

  /** The ids of every page, following `next` from the search's first page. */
  async function pages(query: string): Promise<string[][]> {
    const found: string[][] = [];
    let url: string | undefined = `/Patient?${query}`;
    while (url !== undefined) {
      const response = await server.fhir(url);
      const bundle = await response.json();
      expect(response.status, JSON.stringify(bundle)).toBe(200);
      found.push((bundle.entry ?? []).map((e: { resource: Patient }) => e.resource.id));
      const next = bundle.link.find((l: { relation: string }) => l.relation === 'next')?.url;
      url = next === undefined ? undefined : next.slice(next.indexOf('/Patient?'));
    }
    return found;
  }

  const city = (name: string) => (p: Patient) => p.address[0].city === name;
  const gender = (value: string) => (p: Patient) => p.gender === value;
  const both =
    (...tests: ((p: Patient) => boolean)[]) =>
    (p: Patient) =>
      tests.every((test) => test(p));

  it.each([
    [
      'a common city, walked',
      'address-city=Boston&gender=male',
      both(city('Boston'), gender('male')),
      'walk',
    ],
    [
      'the token first',
      'gender=male&address-city=Boston',
      both(city('Boston'), gender('male')),
      'walk',
    ],
    [
      'a token value with few rows, walked to its end',
      'gender=other&address-city=Boston',
      both(city('Boston'), gender('other')),
      'walk',
    ],
    [
      'a city too rare to walk for',
      'address-city=Rareville&gender=male',
      both(city('Rareville'), gender('male')),
      'join',
    ],
    [
      'a city none of the sample has',
      'address-city=Springfield&gender=male',
      both(city('Springfield'), gender('male')),
      'join',
    ],
    [
      'a city the walk finds too seldom within its bound',
      'address-city=Denver&gender=male',
      both(city('Denver'), gender('male')),
      'join',
    ],
    [
      'two token criteria',
      'gender=male&active=true',
      both(gender('male'), (p) => p.active),
      'walk',
    ],
  ])('%s: pages of 5 as every match sorted', async (_name, query, matches, source) => {
    const expected = stored.filter(matches).map((p) => p.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(await pageSource(`${query}&_count=5`)).toBe(source);
    const found = await pages(`${query}&_count=5`);
    expect(found.flat()).toEqual(expected);
    for (const [i, page] of found.entries()) {
      expect(page).toEqual(expected.slice(i * 5, i * 5 + 5));
    }
  });

  it('walks oldest first for _sort=_lastUpdated, ties still by id', async () => {
    const query = 'address-city=Boston&gender=male&_sort=_lastUpdated&_count=5';
    const expected = stored
      .filter(both(city('Boston'), gender('male')))
      .sort(oldestFirst)
      .map((p) => p.id);
    expect(await pageSource(query)).toBe('walk');
    expect((await pages(query)).flat()).toEqual(expected);
  });

  it('walks to the first match of a page of one that the bound of five misses', async () => {
    const expected = stored.filter(both(city('Denver'), gender('male'))).map((p) => p.id);
    expect(await pageSource('address-city=Denver&gender=male&_count=1')).toBe('walk');
    expect((await pages('address-city=Denver&gender=male&_count=1')).flat()).toEqual(expected);
  });

  it('gives GraphQL lists the same pages', async () => {
    const query =
      'query ($city: String, $offset: Int) { PatientList(address_city: $city, gender: "male", _count: 5, _offset: $offset) { id } }';
    for (const name of ['Boston', 'Denver', 'Rareville']) {
      const expected = stored.filter(both(city(name), gender('male'))).map((p) => p.id);
      for (const offset of [0, 5, 10]) {
        const { status, body } = await postGraphQL(server, query, { city: name, offset });
        expect(status, JSON.stringify(body)).toBe(200);
        const ids = (body.data.PatientList ?? []).map((p: { id: string }) => p.id);
        expect(ids, `${name} from ${offset}`).toEqual(expected.slice(offset, offset + 5));
      }
    }
  });
});
