/**
 * Reads and writes by (type, id) pairs match exact pairs: a batch naming Patient/shared and
 * Observation/other must not pick up Observation/shared, and replacing one resource's search
 * index must leave another type's resource with the same id alone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { currentRowsQuery } from '../../runtime/store/current-reads.js';
import { resourceKeysCondition } from '../../runtime/store/resource-keys.js';
import { ResourceStore } from '../../runtime/store/resource-store.js';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';

const PROJECT = 'keys-project';
const databases: TestDatabase[] = [];
afterAll(() => Promise.all(databases.map((d) => d.drop())));

const patients = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ resourceType: 'Patient', id: `p${i}` }));

describe('the condition on resource keys', () => {
  it('lists a few ids one parameter each, padded to a power of two, and many in one array', () => {
    const one: unknown[] = [];
    expect(resourceKeysCondition('r', patients(1), one)).toBe(
      '(r.resource_type = $1::text AND r.id = $2::text)',
    );
    expect(one).toEqual(['Patient', 'p0']);
    const three: unknown[] = ['project'];
    expect(resourceKeysCondition('r', patients(3), three)).toBe(
      '(r.resource_type = $2::text AND r.id IN ($3::text, $4::text, $5::text, $6::text))',
    );
    expect(three).toEqual(['project', 'Patient', 'p0', 'p1', 'p2', 'p2']);
    const many: unknown[] = [];
    expect(resourceKeysCondition('r', patients(33), many)).toBe(
      '(r.resource_type = $1::text AND r.id = ANY($2::text[]))',
    );
    expect(many[1]).toHaveLength(33);
  });
});

describe.each(await availableEngines())('resource keys on %s', (engine) => {
  const open = async () => {
    const database = await createTestDatabase(engine);
    databases.push(database);
    const store = new ResourceStore(database.db);
    const put = (resourceType: string, id: string, resource: Record<string, unknown>) =>
      store.write(PROJECT, [
        { kind: 'update', resourceType, id, resource: { resourceType, id, ...resource } },
      ]);
    await put('Patient', 'shared', { gender: 'female' });
    await put('Observation', 'shared', { status: 'final', code: { text: 'a' } });
    await put('Observation', 'other', { status: 'final', code: { text: 'b' } });
    return { store, put, db: database.db };
  };

  it('reads exactly the pairs asked for, across types', async () => {
    const { store } = await open();
    const found = await store.readMany(PROJECT, [
      { resourceType: 'Patient', id: 'shared' },
      { resourceType: 'Observation', id: 'other' },
      { resourceType: 'Patient', id: 'other' },
    ]);
    expect([...found.keys()].sort()).toEqual(['Observation/other', 'Patient/shared']);
  });

  it('replaces the search index of the resource written, not of its namesake', async () => {
    const { put, db } = await open();
    await put('Patient', 'shared', { gender: 'male' });
    const { rows } = await db.query<{ resource_type: string; value: string }>(
      `SELECT resource_type, value FROM search_token
        WHERE project_id = $1 AND id = 'shared' AND code IN ('gender', 'status') ORDER BY resource_type`,
      [PROJECT],
    );
    expect(rows).toEqual([
      { resource_type: 'Observation', value: 'final' },
      { resource_type: 'Patient', value: 'male' },
    ]);
  });

  it('reads every pair asked for, however many', async () => {
    const { store, put } = await open();
    for (const { id } of patients(40)) await put('Patient', id, { gender: 'other' });
    for (const n of [1, 2, 3, 5, 32, 33, 40]) {
      const found = await store.readMany(PROJECT, patients(n));
      expect(found.size, `${n} keys`).toBe(n);
    }
  });

  it.runIf(engine === 'postgres')(
    'keeps one plan for a read of a few ids, not planning each anew',
    async () => {
      const { db } = await open();
      const { text, values } = currentRowsQuery(PROJECT, patients(3));
      const literal = (value: unknown) => `'${String(value).replace(/'/g, "''")}'`;
      const plans = await db.transaction(async (tx) => {
        await tx.query(`PREPARE keys_read AS ${text}`);
        for (let i = 0; i < 8; i++)
          await tx.query(`EXECUTE keys_read(${values.map(literal).join(', ')})`);
        const { rows } = await tx.query<{ generic: number; custom: number }>(
          `SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = 'keys_read'`,
        );
        await tx.query('DEALLOCATE keys_read');
        return rows[0];
      });
      // PostgreSQL plans the first five runs for their values, then keeps the generic plan.
      expect(plans).toEqual({ generic: 3, custom: 5 });
    },
  );
});
