import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../runtime/store/open-database.js';
import { migrate } from '../runtime/store/migrate.js';
import {
  createTestDatabase,
  type Engine,
  type TestDatabase,
} from '../test/support/test-databases.js';

/** PostgreSQL: a fresh database on the server; PGlite: on disk in a temporary DATA_DIR, as `npm start` runs it. */
export async function openBenchDatabase(engine: Engine): Promise<TestDatabase> {
  if (engine === 'postgres') return createTestDatabase('postgres');
  const dir = mkdtempSync(join(tmpdir(), 'graphir-bench-'));
  const db = await openDatabase({ dataDir: dir });
  await migrate(db);
  return {
    db,
    drop: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
