/**
 * How much a token search reads, from the plans the databases choose (EXPLAIN ANALYZE): the first
 * page in last-update order reads about its own index rows, not every match (migrations/013); a
 * count of one value reads its kept count's few rows (migrations/014), and a count of anything
 * else the matches of its own project only, never another project's rows. With a second
 * criterion, the page walks the token value's rows and probes the other criterion per resource
 * (search-sql-walk.ts) where that pays, and leaves the join to answer where it does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSearchDefinition } from '../../generated/search/index.js';
import { parseCriterion } from '../../runtime/search/parse-search-arguments.js';
import {
  buildCountQuery,
  buildSearchQuery,
  type SqlQuery,
} from '../../runtime/store/search-sql.js';
import { WALK_PER_PAGE_ROW, WALK_SAMPLE } from '../../runtime/store/search-sql-walk.js';
import {
  explain,
  explainKept,
  planNodes,
  rowsRead,
  walkedPageSource,
  type PlanNode,
} from '../support/search-plans.js';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';

/**
 * Observations with the code searched for: in the project searched, and in another, bigger one
 * (as most of a shared database is other projects' rows, so that the planner reads by index).
 */
const MATCHES = 500;
const OTHER_PROJECT_MATCHES = 20_000;
const PAGE = 20;

describe.each(await availableEngines())('token search plans on %s', (engine) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    for (const [project, rows] of [
      ['p', MATCHES],
      ['q', OTHER_PROJECT_MATCHES],
    ] as const) {
      // Each Observation a minute after the one before: obs-1 is the oldest.
      const lastUpdated = `timestamptz '2024-01-01T00:00:00Z' + n * interval '1 minute'`;
      await database.db.query(
        `INSERT INTO resource (project_id, resource_type, id, version_id, last_updated, content)
         SELECT $1, 'Observation', 'obs-' || n, 1, ${lastUpdated}, '{}' FROM generate_series(1, $2::integer) n`,
        [project, rows],
      );
      await database.db.query(
        `INSERT INTO search_token (project_id, resource_type, id, version_id, last_updated, code, system, value)
         SELECT $1, 'Observation', 'obs-' || n, 1, ${lastUpdated}, 'code', 'http://loinc.org', '8867-4'
         FROM generate_series(1, $2::integer) n`,
        [project, rows],
      );
      // The value's kept count: a folded sum and the deltas of three writes since; beside it,
      // the counts of other values, as a project has thousands.
      await database.db.query(
        `INSERT INTO search_token_count (project_id, resource_type, code, value, any_system, system, delta, folded)
         SELECT $1, 'Observation', 'code', '8867-4', false, 'http://loinc.org', d, d > 1
         FROM unnest(ARRAY[$2::integer - 3, 1, 1, 1]) d
         UNION ALL
         SELECT $1, 'Observation', 'code', 'other-' || n, false, 'http://loinc.org', 1, true
         FROM generate_series(1, 5000) n`,
        [project, rows],
      );
    }
    await database.db.query('ANALYZE');
  });

  afterAll(async () => {
    await database?.drop();
  });

  const definition = loadSearchDefinition('Observation');
  const criteria = [
    parseCriterion(definition, 'code', undefined, 'http://loinc.org|8867-4', 'code'),
  ];
  /** The same matches, by two values: no kept count answers it. */
  const eitherValue = [
    parseCriterion(
      definition,
      'code',
      undefined,
      'http://loinc.org|8867-4,http://loinc.org|0000-0',
      'code',
    ),
  ];

  const plan = (query: SqlQuery) => explain(database.db, query);

  /** The scans of `table` in the plan. */
  function scansOf(node: PlanNode, table = 'search_token'): PlanNode[] {
    return planNodes(node).filter((scan) => scan['Relation Name'] === table);
  }

  it('reads about one page of index rows for the newest page, not every match', async () => {
    const query = buildSearchQuery('p', definition, criteria, { count: PAGE, offset: 0, sort: [] });
    const { rows } = await database.db.query<{ id: string }>(query.text, query.values);
    expect(rows.map((row) => row.id)).toEqual(
      Array.from({ length: PAGE }, (_, i) => `obs-${MATCHES - i}`),
    );
    const scans = scansOf(await plan(query));
    expect(scans.length).toBeGreaterThan(0);
    const read = scans.reduce((sum, scan) => sum + scan['Actual Rows'] * scan['Actual Loops'], 0);
    expect(read).toBeLessThan(5 * PAGE);
  });

  it('counts one value from its kept count’s rows, its own project’s only', async () => {
    const query = buildCountQuery('p', definition, criteria);
    const { rows } = await database.db.query<{ total: number }>(query.text, query.values);
    expect(rows).toEqual([{ total: MATCHES }]);
    const tree = await plan(query);
    expect(scansOf(tree)).toEqual([]);
    const scans = scansOf(tree, 'search_token_count');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) {
      expect(scan['Node Type']).not.toBe('Seq Scan');
      expect(scan['Index Cond'] ?? scan['Recheck Cond']).toMatch(/project_id = /);
      expect(scan['Actual Rows'] * scan['Actual Loops']).toBe(4);
    }
  });

  it('counts other searches from its own project’s rows only, through the index', async () => {
    const query = buildCountQuery('p', definition, eitherValue);
    const { rows } = await database.db.query<{ total: number }>(query.text, query.values);
    expect(rows).toEqual([{ total: MATCHES }]);
    const scans = scansOf(await plan(query));
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) {
      // An index scan, or the heap side of a bitmap scan: both find the rows by the index.
      expect(scan['Node Type']).not.toBe('Seq Scan');
      expect(scan['Index Cond'] ?? scan['Recheck Cond']).toMatch(/project_id = /);
      expect(scan['Actual Rows'] * scan['Actual Loops']).toBe(MATCHES);
    }
  });
});

/**
 * Patients of the project searched: n = 1 … PATIENTS, each a minute after the one before; male
 * when n is even, in a city by n: Boston when n is a multiple of 3 (a third of the males), Lowell
 * when n is odd (no male), Salem for n = 7 and 11 (too few to walk for). Another project holds
 * more Patients, so that the planner reads by index, each in a town of its own: as in a real
 * database, most cities are small, and a plan that knows no value expects few rows for any.
 */
const PATIENTS = 6_000;
const OTHER_PROJECT_PATIENTS = 8_000;

function city(n: number): string {
  if (n === 7 || n === 11) return 'salem';
  if (n % 3 === 0) return 'boston';
  return n % 2 === 1 ? 'lowell' : 'quincy';
}

describe.each(await availableEngines())('walked page plans on %s', (engine) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    for (const [project, patients] of [
      ['p', PATIENTS],
      ['q', OTHER_PROJECT_PATIENTS],
    ] as const) {
      const rows = `FROM generate_series(1, $2::integer) n`;
      const at = `timestamptz '2024-01-01T00:00:00Z' + n * interval '1 minute'`;
      const key = `$1, 'Patient', 'pt-' || n, 1, ${at}`;
      await database.db.query(
        `INSERT INTO resource (project_id, resource_type, id, version_id, last_updated, content)
         SELECT ${key}, '{}' ${rows}`,
        [project, patients],
      );
      await database.db.query(
        `INSERT INTO search_token (project_id, resource_type, id, version_id, last_updated, code, value)
         SELECT ${key}, 'gender', CASE WHEN n % 2 = 0 THEN 'male' ELSE 'female' END ${rows}`,
        [project, patients],
      );
      await database.db.query(
        `INSERT INTO search_string (project_id, resource_type, id, version_id, last_updated, code, value)
         SELECT ${key}, 'address-city', CASE WHEN $1 = 'q' THEN 'town-' || n
           WHEN n IN (7, 11) THEN 'salem' WHEN n % 3 = 0 THEN 'boston'
           WHEN n % 2 = 1 THEN 'lowell' ELSE 'quincy' END ${rows}`,
        [project, patients],
      );
    }
    // As the statistics keeper leaves a database: index-only scans that skip the heap.
    await database.db.query('VACUUM ANALYZE');
  });

  afterAll(async () => {
    await database?.drop();
  });

  const definition = loadSearchDefinition('Patient');
  const search = (cityName: string) =>
    buildSearchQuery(
      'p',
      definition,
      [
        parseCriterion(definition, 'address-city', undefined, cityName, 'address-city'),
        parseCriterion(definition, 'gender', undefined, 'male', 'gender'),
      ],
      { count: PAGE, offset: 0, sort: [] },
    );
  /** The Patients a search for males in `cityName` finds, newest first. */
  const males = (cityName: string) =>
    Array.from({ length: PATIENTS }, (_, i) => PATIENTS - i)
      .filter((n) => n % 2 === 0 && city(n) === cityName)
      .map((n) => `pt-${n}`);
  const ids = async (query: SqlQuery) =>
    (await database.db.query<{ id: string }>(query.text, query.values)).rows.map((row) => row.id);
  /** The walked CTE's plan: how far the walk went along the token value. */
  const walked = (plan: PlanNode) =>
    planNodes(plan).find((n) => n['Subplan Name'] === 'CTE walked');
  /** Probes of the city per walked Patient (the city index read by id, once per probe). */
  const probes = (plan: PlanNode) =>
    planNodes(plan)
      .filter((n) => n['Relation Name'] === 'search_string' && n['Actual Loops'] > 1)
      .reduce((sum, n) => sum + n['Actual Loops'], 0);

  it('walks the newest males in index order, probing each one’s city, and stops at the page', async () => {
    const query = search('Boston');
    expect(await ids(query)).toEqual(males('boston').slice(0, PAGE));
    const result = await explain(database.db, query);
    expect(walkedPageSource(result)).toBe('walk');
    const walk = planNodes(walked(result)!).find((n) => n['Relation Name'] === 'search_token');
    expect(walk?.['Index Name']).toBe('search_token_recent');
    // A third of the males live in Boston: about 3 walked per row of the page, not 3,000.
    expect(walk!['Actual Rows']).toBeLessThan(5 * PAGE);
    expect(probes(result)).toBeLessThan(5 * PAGE);
  });

  it('probes each walked Patient’s rows by id in a kept (generic) plan too', async () => {
    // A kept plan knows no value: it expects a handful of rows for any city, and would scan the
    // city's rows for each walked Patient if the probe let it.
    const query = search('Boston');
    const result = await explainKept(database.db, query);
    expect(walkedPageSource(result)).toBe('walk');
    const probeScans = planNodes(result).filter(
      (n) => n['Relation Name'] === 'search_string' && n['Actual Loops'] > 1,
    );
    expect(probeScans.length).toBeGreaterThan(0);
    for (const scan of probeScans) expect(scan['Index Name']).toBe('search_string_id');
  });

  it('leaves a city too rare to walk for to the join, having counted it only', async () => {
    const query = search('Salem');
    expect(await ids(query)).toEqual([]);
    const result = await explain(database.db, query);
    expect(walkedPageSource(result)).toBe('join');
    expect(walked(result)!['Actual Loops']).toBe(0);
    expect(rowsRead(result, 'search_string')).toBeLessThanOrEqual(2 * 2);
  });

  it('gives up after its sample when the city and the token are each common but never together', async () => {
    const query = search('Lowell');
    expect(await ids(query)).toEqual([]);
    const result = await explain(database.db, query);
    expect(walkedPageSource(result)).toBe('join');
    expect(probes(result)).toBe(WALK_SAMPLE);
    expect(WALK_SAMPLE).toBeLessThan(WALK_PER_PAGE_ROW * PAGE);
  });
});
