/**
 * Migration 014 counts the token index rows a database already holds: each key's kept count is
 * the resources with it (a value twice in one system counted once, a value in two systems once
 * in any system), in folded rows, and values without a value (text only) are not counted.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../runtime/model/project-path.js';
import { migrate } from '../../runtime/store/migrate.js';
import { availableEngines, createTestDatabase } from '../support/test-databases.js';
import { tokenCountsAndTruth } from '../support/token-count-truth.js';

const MIGRATIONS = projectPath('runtime/store/migrations');
const TOKEN_COUNTS = '014-token-counts.sql';

describe.each(await availableEngines())('migration 014 on %s', (engine) => {
  it('counts the existing token rows by resource, in each system and in any', async () => {
    const earlier = mkdtempSync(join(tmpdir(), 'graphir-migrations-'));
    for (const name of readdirSync(MIGRATIONS).filter((n) => n < TOKEN_COUNTS))
      copyFileSync(join(MIGRATIONS, name), join(earlier, name));
    const { db, drop } = await createTestDatabase(engine, { migrated: false });
    try {
      await migrate(db, earlier);
      await db.exec(`
        INSERT INTO search_token (project_id, resource_type, id, version_id, last_updated, code, system, value) VALUES
          ('p', 'Observation', 'twice', 1, now(), 'code', 'urn:a', 'v'),
          ('p', 'Observation', 'twice', 1, now(), 'code', 'urn:a', 'v'),
          ('p', 'Observation', 'three-systems', 1, now(), 'code', 'urn:a', 'v'),
          ('p', 'Observation', 'three-systems', 1, now(), 'code', 'urn:b', 'v'),
          ('p', 'Observation', 'three-systems', 1, now(), 'code', NULL, 'v'),
          ('p', 'Observation', 'no-system', 1, now(), 'code', NULL, 'v'),
          ('p', 'Observation', 'text-only', 1, now(), 'code', NULL, NULL),
          ('p', 'Observation', 'twice', 1, now(), 'status', NULL, 'final'),
          ('q', 'Observation', 'other', 1, now(), 'code', 'urn:a', 'v');
      `);
      expect(await migrate(db)).toEqual([TOKEN_COUNTS]);
      const { kept, counted } = await tokenCountsAndTruth(db);
      expect(kept).toEqual(counted);
      expect(kept).toEqual({
        'p Observation code -|v': 2,
        'p Observation code *|v': 3,
        'p Observation code urn:a|v': 2,
        'p Observation code urn:b|v': 1,
        'p Observation status -|final': 1,
        'p Observation status *|final': 1,
        'q Observation code urn:a|v': 1,
        'q Observation code *|v': 1,
      });
      const { rows } = await db.query<{ unfolded: number }>(
        'SELECT count(*)::integer AS unfolded FROM search_token_count WHERE NOT folded',
      );
      expect(rows).toEqual([{ unfolded: 0 }]);
    } finally {
      rmSync(earlier, { recursive: true, force: true });
      await drop();
    }
  });
});
