/**
 * Index rows carry the version they index and its last update (migrations/006, 007): the store
 * writes them, the migrations fill them in for existing rows, and searches in last-update order
 * page by them and take their versions from them (search-sql.ts) — so those pages must follow
 * every update and deletion. Also the later migrations of these tables: no rows for `_id` and
 * `_lastUpdated` (008), text compared byte by byte (009).
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../runtime/store/migrate.js';
import { projectPath } from '../../runtime/model/project-path.js';
import { INDEX_TABLES } from '../../runtime/store/search-sql-params.js';
import {
  availableEngines,
  createTestDatabase,
  type Engine,
  type TestDatabase,
} from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TABLES = Object.values(INDEX_TABLES);
const MIGRATIONS = projectPath('runtime/store/migrations');
const INDEX_LAST_UPDATED = '006-index-last-updated.sql';
const INDEX_VERSION = '007-index-version.sql';
const RESOURCE_COLUMN_ROWS = '008-resource-column-rows.sql';

/** A fresh database with the migrations before `migration` only. */
async function databaseBefore(engine: Engine, migration: string): Promise<TestDatabase> {
  const earlier = mkdtempSync(join(tmpdir(), 'graphir-migrations-'));
  for (const name of readdirSync(MIGRATIONS).filter((n) => n < migration))
    copyFileSync(join(MIGRATIONS, name), join(earlier, name));
  const database = await createTestDatabase(engine, { migrated: false });
  await migrate(database.db, earlier);
  rmSync(earlier, { recursive: true, force: true });
  return database;
}

describe.each(await availableEngines())('index rows and last updates on %s', (engine) => {
  it('migration 006 gives every index row its resource’s last update and drops rows of deleted or missing resources', async () => {
    const { db, drop } = await databaseBefore(engine, INDEX_LAST_UPDATED);
    try {
      await db.exec(`
        INSERT INTO resource (project_id, resource_type, id, version_id, last_updated, deleted, content) VALUES
          ('p', 'Patient', 'kept', 3, '2024-05-06T07:08:09.123Z', false, '{}'),
          ('p', 'Patient', 'gone', 2, '2024-05-07T00:00:00Z', true, null),
          ('q', 'Patient', 'kept', 1, '2023-01-01T00:00:00Z', false, '{}');
        INSERT INTO search_string (project_id, resource_type, id, code, value) VALUES
          ('p', 'Patient', 'kept', 'name', 'ada'), ('p', 'Patient', 'gone', 'name', 'ada'),
          ('p', 'Patient', 'never', 'name', 'ada'), ('q', 'Patient', 'kept', 'name', 'ada');
        INSERT INTO search_token (project_id, resource_type, id, code, value) VALUES ('p', 'Patient', 'kept', 'gender', 'female');
        INSERT INTO search_reference (project_id, resource_type, id, code, target_type, target_id) VALUES ('p', 'Patient', 'kept', 'organization', 'Organization', 'o');
        INSERT INTO search_date (project_id, resource_type, id, code, start_at) VALUES ('p', 'Patient', 'kept', 'birthdate', '1815-12-10');
        INSERT INTO search_number (project_id, resource_type, id, code, value) VALUES ('p', 'Patient', 'kept', 'n', 1);
        INSERT INTO search_quantity (project_id, resource_type, id, code, value) VALUES ('p', 'Patient', 'kept', 'q', 2);
        INSERT INTO search_uri (project_id, resource_type, id, code, value) VALUES ('p', 'Patient', 'kept', '_profile', 'http://x');
      `);
      expect((await migrate(db))[0]).toBe(INDEX_LAST_UPDATED);
      for (const table of TABLES) {
        const { rows } = await db.query<{ project_id: string; id: string; last_updated: Date }>(
          `SELECT project_id, id, last_updated FROM ${table} ORDER BY project_id`,
        );
        const expected = [
          { project_id: 'p', id: 'kept', last_updated: '2024-05-06T07:08:09.123Z' },
        ];
        if (table === 'search_string')
          expected.push({ project_id: 'q', id: 'kept', last_updated: '2023-01-01T00:00:00.000Z' });
        expect(
          rows.map((row) => ({ ...row, last_updated: new Date(row.last_updated).toISOString() })),
          table,
        ).toEqual(expected);
      }
      await expect(
        db.query(
          `INSERT INTO search_string (project_id, resource_type, id, code, value) VALUES ('p', 'Patient', 'kept', 'name', 'x')`,
        ),
      ).rejects.toThrow(/last_updated/);
    } finally {
      await drop();
    }
  });

  it('migration 007 gives every index row its resource’s version and drops rows of deleted or missing resources', async () => {
    const { db, drop } = await databaseBefore(engine, INDEX_VERSION);
    try {
      const at = `'2024-05-06T07:08:09.123Z'`;
      await db.exec(`
        INSERT INTO resource (project_id, resource_type, id, version_id, last_updated, deleted, content) VALUES
          ('p', 'Patient', 'kept', 3, ${at}, false, '{}'),
          ('p', 'Patient', 'gone', 2, ${at}, true, null),
          ('q', 'Patient', 'kept', 7, ${at}, false, '{}');
        INSERT INTO search_string (project_id, resource_type, id, last_updated, code, value) VALUES
          ('p', 'Patient', 'kept', ${at}, 'name', 'ada'), ('p', 'Patient', 'gone', ${at}, 'name', 'ada'),
          ('p', 'Patient', 'never', ${at}, 'name', 'ada'), ('q', 'Patient', 'kept', ${at}, 'name', 'ada');
        INSERT INTO search_token (project_id, resource_type, id, last_updated, code, value) VALUES ('p', 'Patient', 'kept', ${at}, 'gender', 'female');
        INSERT INTO search_reference (project_id, resource_type, id, last_updated, code, target_type, target_id) VALUES ('p', 'Patient', 'kept', ${at}, 'organization', 'Organization', 'o');
        INSERT INTO search_date (project_id, resource_type, id, last_updated, code, start_at) VALUES ('p', 'Patient', 'kept', ${at}, 'birthdate', '1815-12-10');
        INSERT INTO search_number (project_id, resource_type, id, last_updated, code, value) VALUES ('p', 'Patient', 'kept', ${at}, 'n', 1);
        INSERT INTO search_quantity (project_id, resource_type, id, last_updated, code, value) VALUES ('p', 'Patient', 'kept', ${at}, 'q', 2);
        INSERT INTO search_uri (project_id, resource_type, id, last_updated, code, value) VALUES ('p', 'Patient', 'kept', ${at}, '_profile', 'http://x');
      `);
      expect((await migrate(db))[0]).toBe(INDEX_VERSION);
      for (const table of TABLES) {
        const { rows } = await db.query<{ project_id: string; id: string; version_id: string }>(
          `SELECT project_id, id, version_id::text FROM ${table} ORDER BY project_id`,
        );
        const expected = [{ project_id: 'p', id: 'kept', version_id: '3' }];
        if (table === 'search_string')
          expected.push({ project_id: 'q', id: 'kept', version_id: '7' });
        expect(rows, table).toEqual(expected);
      }
      await expect(
        db.query(
          `INSERT INTO search_string (project_id, resource_type, id, last_updated, code, value) VALUES ('p', 'Patient', 'kept', now(), 'name', 'x')`,
        ),
      ).rejects.toThrow(/version_id/);
    } finally {
      await drop();
    }
  });

  it('migration 008 removes the index rows of _id and _lastUpdated, and only those', async () => {
    const { db, drop } = await databaseBefore(engine, RESOURCE_COLUMN_ROWS);
    try {
      const row = `'p', 'Patient', 'kept', 1, now()`;
      await db.exec(`
        INSERT INTO resource (project_id, resource_type, id, version_id, last_updated, deleted, content) VALUES (${row}, false, '{}');
        INSERT INTO search_token (project_id, resource_type, id, version_id, last_updated, code, value) VALUES
          (${row}, '_id', 'kept'), (${row}, 'gender', 'female');
        INSERT INTO search_date (project_id, resource_type, id, version_id, last_updated, code, start_at) VALUES
          (${row}, '_lastUpdated', now()), (${row}, 'birthdate', '1815-12-10');
      `);
      expect((await migrate(db))[0]).toBe(RESOURCE_COLUMN_ROWS);
      const { rows } = await db.query<{ code: string }>(
        'SELECT code FROM search_token UNION ALL SELECT code FROM search_date ORDER BY code',
      );
      expect(rows.map((r) => r.code)).toEqual(['birthdate', 'gender']);
    } finally {
      await drop();
    }
  });

  it('migration 009 makes the text columns of the resource and index tables compare byte by byte', async () => {
    const { db, drop } = await createTestDatabase(engine);
    try {
      const { rows } = await db.query<{
        table_name: string;
        column_name: string;
        collation: string | null;
      }>(
        `SELECT table_name, column_name, collation_name AS collation FROM information_schema.columns
          WHERE table_schema = current_schema() AND data_type = 'text'
            AND table_name IN ('resource', 'resource_history', ${TABLES.map((t) => `'${t}'`).join(', ')})`,
      );
      expect(rows.length).toBeGreaterThan(30);
      expect(rows.filter((row) => row.collation !== 'C')).toEqual([]);
      // Byte order: upper case before lower case, and é after z.
      await db.exec(`INSERT INTO resource (project_id, resource_type, id, version_id, last_updated, deleted, content) VALUES
        ('p', 'Basic', 'é', 1, now(), false, '{}'), ('p', 'Basic', 'z', 1, now(), false, '{}'),
        ('p', 'Basic', 'B', 1, now(), false, '{}'), ('p', 'Basic', 'a', 1, now(), false, '{}')`);
      const ordered = await db.query<{ id: string }>(
        `SELECT id FROM resource WHERE project_id = 'p' ORDER BY id`,
      );
      expect(ordered.rows.map((row) => row.id)).toEqual(['B', 'a', 'z', 'é']);
    } finally {
      await drop();
    }
  });

  describe('through the server', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer(engine);
    });
    afterAll(async () => {
      await server?.stop();
    });

    /** The distinct versions and last updates of the resource's index rows, over every index table. */
    async function indexVersions(id: string): Promise<string[]> {
      const { rows } = await server.database.db.query<{ version_id: string; last_updated: Date }>(
        TABLES.map(
          (table) =>
            `SELECT version_id::text, last_updated FROM ${table} WHERE project_id = $1 AND id = $2`,
        ).join(' UNION '),
        [server.project.projectId, id],
      );
      return rows.map((row) => `${row.version_id} ${new Date(row.last_updated).toISOString()}`);
    }

    async function write(method: string, path: string, body?: unknown) {
      const response = await server.fhir(path, { method, body });
      expect(response.status, await response.clone().text()).toBeLessThan(300);
      return method === 'DELETE' ? undefined : await response.json();
    }

    /** The page's ids, after checking that the bundle's total is `total`. */
    async function page(query: string, total?: number): Promise<string[]> {
      const response = await server.fhir(`/Patient?${query}`);
      expect(response.status).toBe(200);
      const bundle = await response.json();
      if (total !== undefined) expect(bundle.total).toBe(total);
      return (bundle.entry ?? []).map((entry: { resource: { id: string } }) => entry.resource.id);
    }

    const patient = (id: string, family: string) => ({
      resourceType: 'Patient',
      id,
      name: [{ family, given: ['Ordered'] }],
      gender: 'other',
      birthDate: '1990-01-01',
      identifier: [{ system: 'urn:order', value: id }],
      managingOrganization: { reference: 'Organization/org' },
      meta: { profile: ['http://example.org/ordered'] },
    });

    it('writes each version and its last update into its index rows, and leaves none for a deletion', async () => {
      const first = await write('PUT', '/Patient/ord-index', patient('ord-index', 'Lovelace'));
      expect(await indexVersions('ord-index')).toEqual([`1 ${first.meta.lastUpdated}`]);
      const second = await write('PUT', '/Patient/ord-index', patient('ord-index', 'Byron'));
      expect(second.meta.lastUpdated).not.toBe(first.meta.lastUpdated);
      expect(await indexVersions('ord-index')).toEqual([`2 ${second.meta.lastUpdated}`]);
      await write('DELETE', '/Patient/ord-index');
      expect(await indexVersions('ord-index')).toEqual([]);
    });

    it('writes no index rows for _id and _lastUpdated, which searches answer from the resource row', async () => {
      const written = await write('PUT', '/Patient/ord-columns', patient('ord-columns', 'Column'));
      const { rows } = await server.database.db.query<{ code: string }>(
        TABLES.map((table) => `SELECT code FROM ${table} WHERE project_id = $1 AND id = $2`).join(
          ' UNION ',
        ),
        [server.project.projectId, 'ord-columns'],
      );
      const codes = rows.map((r) => r.code);
      expect(codes).toContain('family');
      expect(codes).not.toContain('_id');
      expect(codes).not.toContain('_lastUpdated');
      expect(await page('_id=ord-columns', 1)).toEqual(['ord-columns']);
      expect(
        await page(
          `_id=ord-columns&_lastUpdated=${encodeURIComponent(written.meta.lastUpdated)}`,
          1,
        ),
      ).toEqual(['ord-columns']);
      expect(await page('_id=ord-columns&_lastUpdated=lt2000-01-01', 0)).toEqual([]);
      // Out of the next test's pages.
      await write('DELETE', '/Patient/ord-columns');
    });

    it('writes a resource that has no index rows at all', async () => {
      const bot = {
        resourceType: 'Bot',
        id: 'no-index-rows',
        code: 'export async function handler() {}',
      };
      const written = await write('PUT', '/Bot/no-index-rows', bot);
      expect(written.meta.versionId).toBe('1');
      expect(await indexVersions('no-index-rows')).toEqual([]);
      expect((await write('PUT', '/Bot/no-index-rows', bot)).meta.versionId).toBe('2');
    });

    it('pages in last-update order follow updates and deletions', async () => {
      for (const id of ['ord-a', 'ord-b', 'ord-c', 'ord-d']) {
        await write('PUT', `/Patient/${id}`, patient(id, `Family ${id}`));
        // Distinct instants, so that the order does not fall back to ids.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const query = 'given=ordered&gender=other';
      expect(await page(`${query}&_count=2`, 4)).toEqual(['ord-d', 'ord-c']);
      expect(await page(`${query}&_count=2&_offset=2`)).toEqual(['ord-b', 'ord-a']);
      expect(await page(`${query}&_count=3&_sort=_lastUpdated`)).toEqual([
        'ord-a',
        'ord-b',
        'ord-c',
      ]);

      await write('PUT', '/Patient/ord-a', patient('ord-a', 'Updated'));
      expect(await page(`${query}&_count=2`)).toEqual(['ord-a', 'ord-d']);
      // The page's version comes from the index rows: the update's, with its contents.
      const newest = await (await server.fhir(`/Patient?${query}&_count=1`)).json();
      expect(newest.entry[0].resource.meta.versionId).toBe('2');
      expect(newest.entry[0].resource.name[0].family).toBe('Updated');
      await write('DELETE', '/Patient/ord-d');
      expect(await page(`${query}&_count=2`, 3)).toEqual(['ord-a', 'ord-c']);
      expect(await page(`${query}&_count=2&_offset=2`)).toEqual(['ord-b']);
      // No longer matching: gone from the pages too.
      await write('PUT', '/Patient/ord-c', { ...patient('ord-c', 'C'), gender: 'female' });
      expect(await page(`${query}&_count=5`, 2)).toEqual(['ord-a', 'ord-b']);
    });
  });
});
