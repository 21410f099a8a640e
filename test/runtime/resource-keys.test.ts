/**
 * Reads and writes by (type, id) pairs match exact pairs: a batch naming Patient/shared and
 * Observation/other must not pick up Observation/shared, and replacing one resource's search
 * index must leave another type's resource with the same id alone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ResourceStore } from '../../runtime/store/resource-store.js';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';

const PROJECT = 'keys-project';
const databases: TestDatabase[] = [];
afterAll(() => Promise.all(databases.map((d) => d.drop())));

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
});
