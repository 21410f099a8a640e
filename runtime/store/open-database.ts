/** Opens the database the configuration names: a PostgreSQL server, or PGlite. */
import { PGlite } from '@electric-sql/pglite';
import type { Database } from './database.js';
import { pgliteDatabase } from './pglite-database.js';
import { openPostgres, type PostgresOptions } from './postgres-database.js';

export type DatabaseTarget =
  PostgresOptions | { readonly dataDir: string } | { readonly pglite: PGlite };

export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  if ('url' in target) return openPostgres(target);
  const db = 'pglite' in target ? target.pglite : await PGlite.create(target.dataDir);
  return pgliteDatabase(db);
}
