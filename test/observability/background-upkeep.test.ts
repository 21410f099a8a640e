/**
 * Background upkeep of the database (folding the kept token counts, planner statistics) leaves
 * the data exact when it fails and tries again later; the server logs each failure as a warning,
 * so that one that keeps failing is seen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatisticsKeeper } from '../../runtime/store/statistics.js';
import { createTestDatabase } from '../support/test-databases.js';
import { ROOT, startObservedServer, type ObservedServer } from './observed-server.js';

describe('background upkeep that fails', () => {
  let server: ObservedServer;
  let token: string;
  let projectId: string;

  beforeAll(async () => {
    server = await startObservedServer();
    const rootToken = await server.token(ROOT.id, ROOT.secret);
    const created = await fetch(`${server.url}/admin/projects`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${rootToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Upkeep' }),
    });
    const project = (await created.json()) as {
      projectId: string;
      clientId: string;
      clientSecret: string;
    };
    projectId = project.projectId;
    token = await server.token(project.clientId, project.clientSecret);
  });
  afterAll(() => server?.stop());

  it('logs a folding of the token counts that failed, and the counts stay exact', async () => {
    // Writes only insert count rows; a folding deletes them. Refusing deletes fails the folding.
    await server.db.query(`CREATE FUNCTION refuse_fold() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'folding refused by the test'; END $$`);
    await server.db.query(`CREATE TRIGGER refuse_fold BEFORE DELETE ON search_token_count
      FOR EACH STATEMENT EXECUTE FUNCTION refuse_fold()`);
    // 100 writes of a project start a folding of its counts.
    for (let i = 0; i < 100; i++) {
      const response = await fetch(`${server.url}/fhir/R4/Patient`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/fhir+json' },
        body: JSON.stringify({ resourceType: 'Patient', gender: 'female' }),
      });
      expect(response.status).toBe(201);
    }
    await server.settled();
    const warnings = server.lines().filter((line) => line.work === 'token counts');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 40,
      projectId,
      msg: 'background upkeep failed; it is tried again later',
    });
    expect(JSON.stringify(warnings[0].err)).toContain('folding refused by the test');
    const total = await fetch(
      `${server.url}/fhir/R4/Patient?gender=female&_total=accurate&_count=0`,
      { headers: { Authorization: `Bearer ${token}` } },
    );
    expect(((await total.json()) as { total: number }).total).toBe(100);
  });
});

describe('planner statistics that cannot be gathered', () => {
  it('are reported, and the next attempt is not blocked', async () => {
    const database = await createTestDatabase('pglite');
    try {
      await database.db.query('DROP TABLE search_uri');
      const failures: [string, unknown][] = [];
      const keeper = new StatisticsKeeper(database.db, (work, error) =>
        failures.push([work, error]),
      );
      await keeper.analyze();
      await keeper.analyze();
      expect(failures.map(([work]) => work)).toEqual(['planner statistics', 'planner statistics']);
      expect(String(failures[0][1])).toContain('search_uri');
    } finally {
      await database.drop();
    }
  });
});
