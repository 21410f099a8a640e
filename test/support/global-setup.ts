/**
 * Once per `npm test`, before any test file: a migrated PGlite, dumped to a file that every test
 * file's databases start from (creating and migrating a PGlite takes seconds, loading a dump a
 * fraction of that), and on the PostgreSQL server a migrated template database that test
 * databases are copied from. Both are removed when the run ends.
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../runtime/store/migrate.js';
import { migrateGraphileWorker } from '../../runtime/jobs/graphile-queue.js';
import { openDatabase } from '../../runtime/store/open-database.js';
import { dropPostgresDatabase, postgresUrl, withDatabase, withAdmin } from './postgres-admin.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A tar file of a migrated PGlite data directory. */
    pgliteTemplate: string;
    /** A migrated database on the PostgreSQL server, absent when none answers. */
    postgresTemplate?: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const suffix = randomBytes(6).toString('hex');
  const pglite = await PGlite.create();
  await migrate(await openDatabase({ pglite }));
  const dumpFile = join(tmpdir(), `graphir-test-template-${suffix}.tar`);
  writeFileSync(dumpFile, Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer()));
  await pglite.close();
  project.provide('pgliteTemplate', dumpFile);

  const adminUrl = await postgresUrl();
  const template = `graphir_test_template_${suffix}`;
  if (adminUrl) {
    await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE ${template}`));
    const db = await openDatabase({ url: withDatabase(adminUrl, template), poolSize: 1 });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    // The job queue's tables too: each server's start would otherwise make them in its copy.
    await migrateGraphileWorker(withDatabase(adminUrl, template));
    project.provide('postgresTemplate', template);
  }
  return async () => {
    rmSync(dumpFile, { force: true });
    if (adminUrl) await dropPostgresDatabase(adminUrl, template);
  };
}
