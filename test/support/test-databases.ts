/**
 * Real databases for tests: PGlite cloned from a migrated template (creating a PGlite takes
 * seconds, cloning half of one), and a fresh database on the PostgreSQL server per call.
 * PostgreSQL: GRAPHIR_TEST_DATABASE_URL (set by .ci/run, where it must answer), else the local
 * server on 127.0.0.1:5432 when one answers; without one, PostgreSQL suites are skipped.
 */
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { type Database } from '../../runtime/store/database.js';
import { openDatabase } from '../../runtime/store/open-database.js';
import { migrate } from '../../runtime/store/migrate.js';

export type Engine = 'pglite' | 'postgres';

const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
const configuredUrl = process.env.GRAPHIR_TEST_DATABASE_URL;
let template: Promise<PGlite> | undefined;

/** The engines to run database tests on here. */
export async function availableEngines(): Promise<Engine[]> {
  return (await postgresUrl()) ? ['pglite', 'postgres'] : ['pglite'];
}

export interface TestDatabase {
  readonly db: Database;
  /** For PostgreSQL, a URL of the fresh database, so that other processes can share it. */
  readonly url?: string;
  drop(): Promise<void>;
}

/**
 * A fresh database, with every migration applied; with `migrated: false`, with none (for tests of
 * the migrations themselves).
 */
export async function createTestDatabase(
  engine: Engine,
  { migrated = true }: { migrated?: boolean } = {},
): Promise<TestDatabase> {
  if (engine === 'pglite' && !migrated) {
    const db = await openDatabase({ pglite: await PGlite.create() });
    return { db, drop: () => db.close() };
  }
  if (engine === 'pglite') {
    template ??= (async () => {
      const db = await PGlite.create();
      await migrate(await openDatabase({ pglite: db }));
      return db;
    })();
    const db = await openDatabase({ pglite: (await (await template).clone()) as PGlite });
    return { db, drop: () => db.close() };
  }
  const adminUrl = await postgresUrl();
  if (!adminUrl) throw new Error('No PostgreSQL server for tests');
  const name = `graphir_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE ${name}`));
  const url = withDatabase(adminUrl, name);
  const db = await openDatabase({ url });
  if (migrated) await migrate(db);
  return {
    db,
    url,
    drop: async () => {
      await db.close();
      await withAdmin(adminUrl, (admin) =>
        admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      );
    },
  };
}

let probed: Promise<string | undefined> | undefined;
function postgresUrl(): Promise<string | undefined> {
  probed ??= (async () => {
    const url = configuredUrl ?? DEFAULT_POSTGRES_URL;
    try {
      await withAdmin(url, (admin) => admin.query('SELECT 1'));
      return url;
    } catch (error) {
      if (configuredUrl)
        throw new Error(
          `GRAPHIR_TEST_DATABASE_URL=${configuredUrl} does not answer: ${(error as Error).message}`,
        );
      return undefined;
    }
  })();
  return probed;
}

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
