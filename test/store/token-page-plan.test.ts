/**
 * How much a token search reads, from the plans the databases choose (EXPLAIN ANALYZE): the first
 * page in last-update order reads about its own index rows, not every match (migrations/013); a
 * count of one value reads its kept count's few rows (migrations/014), and a count of anything
 * else the matches of its own project only, never another project's rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSearchDefinition } from '../../generated/search/index.js';
import { parseCriterion } from '../../runtime/search/parse-search-arguments.js';
import {
  buildCountQuery,
  buildSearchQuery,
  type SqlQuery,
} from '../../runtime/store/search-sql.js';
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

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Cond'?: string;
  readonly 'Recheck Cond'?: string;
  readonly 'Actual Rows': number;
  readonly 'Actual Loops': number;
  readonly Plans?: PlanNode[];
}

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

  async function plan(query: SqlQuery): Promise<PlanNode> {
    const { rows } = await database.db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] | string }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${query.text}`,
      query.values,
    );
    const json = rows[0]['QUERY PLAN'];
    return (typeof json === 'string' ? JSON.parse(json) : json)[0].Plan;
  }

  /** The scans of `table` in the plan. */
  function scansOf(node: PlanNode, table = 'search_token'): PlanNode[] {
    const own = node['Relation Name'] === table ? [node] : [];
    return [...own, ...(node.Plans ?? []).flatMap((child) => scansOf(child, table))];
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
