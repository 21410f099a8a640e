/**
 * Applies runtime/store/migrations/*.sql in name order, each once, at start-up. Several server
 * processes may start together on one PostgreSQL database: an advisory lock lets one migrate
 * while the others wait.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectPath } from '../model/project-path.js';
import type { Database } from './database.js';

/** Any constant; the same in every Graphir process. */
const MIGRATION_LOCK = 7_215_001;

/** The .sql files are not compiled into dist/: they are read from the project. */
export async function migrate(
  db: Database,
  dir = projectPath('runtime/store/migrations'),
): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migration (name text PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await tx.query<{ name: string }>('SELECT name FROM schema_migration');
    const applied = new Set(rows.map((r) => r.name));
    const pending = readdirSync(dir)
      .filter((f) => f.endsWith('.sql') && !applied.has(f))
      .sort();
    for (const name of pending) {
      for (const statement of splitStatements(readFileSync(join(dir, name), 'utf8')))
        await tx.query(statement);
      await tx.query('INSERT INTO schema_migration (name) VALUES ($1)', [name]);
    }
    return pending;
  });
}

/** Migrations are plain DDL without functions, so `;` at a line end ends a statement. */
function splitStatements(sql: string): string[] {
  return sql
    .replace(/--.*$/gm, '')
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
