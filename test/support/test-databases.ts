/**
 * Real databases for tests: a fresh database on each engine per call. Under vitest they start
 * from the templates the global setup made once per run (global-setup.ts): PGlite loaded from a
 * dump of a migrated data directory, PostgreSQL copied from a migrated template database.
 * Elsewhere (benches) they are made and migrated from scratch.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { Database } from '../../runtime/store/database.js';
import { migrate } from '../../runtime/store/migrate.js';
import { openDatabase } from '../../runtime/store/open-database.js';
import { dropPostgresDatabase, postgresUrl, withAdmin, withDatabase } from './postgres-admin.js';

export type Engine = 'pglite' | 'postgres';

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

interface Templates {
  readonly pgliteTemplate?: string;
  readonly postgresTemplate?: string;
}

let templates: Promise<Templates> | undefined;

/** What the global setup made, under vitest; nothing elsewhere. */
function provided(): Promise<Templates> {
  templates ??= process.env.VITEST
    ? import('vitest').then(({ inject }) => ({
        pgliteTemplate: inject('pgliteTemplate'),
        postgresTemplate: inject('postgresTemplate'),
      }))
    : Promise.resolve({});
  return templates;
}

/**
 * A fresh database, with every migration applied; with `migrated: false`, with none (for tests of
 * the migrations themselves).
 */
export async function createTestDatabase(
  engine: Engine,
  { migrated = true }: { migrated?: boolean } = {},
): Promise<TestDatabase> {
  const { pgliteTemplate, postgresTemplate } = await provided();
  if (engine === 'pglite') {
    const pglite =
      migrated && pgliteTemplate
        ? await PGlite.create({ loadDataDir: new Blob([readFileSync(pgliteTemplate)]) })
        : await PGlite.create();
    const db = await openDatabase({ pglite });
    if (migrated && !pgliteTemplate) await migrate(db);
    return { db, drop: () => db.close() };
  }
  const adminUrl = await postgresUrl();
  if (!adminUrl) throw new Error('No PostgreSQL server for tests');
  const name = `graphir_test_${randomBytes(6).toString('hex')}`;
  const copied = migrated && postgresTemplate !== undefined;
  await withAdmin(adminUrl, (admin) =>
    admin.query(`CREATE DATABASE ${name}${copied ? ` TEMPLATE ${postgresTemplate}` : ''}`),
  );
  const url = withDatabase(adminUrl, name);
  const db = await openDatabase({ url });
  if (migrated && !copied) await migrate(db);
  return {
    db,
    url,
    drop: async () => {
      await db.close();
      await dropPostgresDatabase(adminUrl, name);
    },
  };
}
