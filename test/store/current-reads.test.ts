/**
 * Reads asked for in the same turn of the event loop share one SQL statement per project
 * (runtime/store/current-reads.ts), and each caller still gets exactly its own keys from its
 * own project, deleted ones marked, missing ones absent.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { CurrentReads } from '../../runtime/store/current-reads.js';
import type { Queryable } from '../../runtime/store/database.js';
import { ResourceStore } from '../../runtime/store/resource-store.js';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';

const databases: TestDatabase[] = [];
afterAll(() => Promise.all(databases.map((d) => d.drop())));

describe.each(await availableEngines())('current reads on %s', (engine) => {
  const open = async () => {
    const database = await createTestDatabase(engine);
    databases.push(database);
    const store = new ResourceStore(database.db);
    const put = (projectId: string, id: string, family: string) =>
      store.write(projectId, [
        {
          kind: 'update',
          resourceType: 'Patient',
          id,
          resource: { resourceType: 'Patient', id, name: [{ family }] },
        },
      ]);
    const statements: string[] = [];
    const counted: Queryable = {
      query: (text, values, options) => (
        statements.push(text),
        database.db.query(text, values, options)
      ),
    };
    return { store, put, reads: new CurrentReads(counted), statements };
  };
  const patient = (id: string) => ({ resourceType: 'Patient', id });

  it('answers the reads of one turn with one statement per project', async () => {
    const { put, store, reads, statements } = await open();
    for (let i = 0; i < 10; i++) {
      await put('a', `p${i}`, `A${i}`);
      await put('b', `p${i}`, `B${i}`);
    }
    await store.write('a', [{ kind: 'delete', resourceType: 'Patient', id: 'p9' }]);
    const asked = Array.from({ length: 10 }, (_, i) => [
      reads.read('a', [patient(`p${i}`), patient('missing')]),
      reads.read('b', [patient(`p${i}`)]),
    ]).flat();
    const answers = await Promise.all(asked);
    expect(statements).toHaveLength(2);
    for (let i = 0; i < 10; i++) {
      const mine = answers[2 * i];
      const theirs = answers[2 * i + 1];
      expect([...mine.keys()]).toEqual([`Patient/p${i}`]);
      expect([...theirs.keys()]).toEqual([`Patient/p${i}`]);
      expect(theirs.get(`Patient/p${i}`)!.content!.name).toEqual([{ family: `B${i}` }]);
      if (i === 9) {
        expect(mine.get('Patient/p9')).toMatchObject({ deleted: true, versionId: '2' });
        expect(mine.get('Patient/p9')!.content).toBeUndefined();
      } else {
        expect(mine.get(`Patient/p${i}`)!.content!.name).toEqual([{ family: `A${i}` }]);
      }
    }
    // A later turn is a statement of its own.
    await reads.read('a', [patient('p0')]);
    expect(statements).toHaveLength(3);
  });

  it('splits a turn of many keys over statements of at most 1,000 keys', async () => {
    const { put, reads, statements } = await open();
    await put('a', 'p0', 'A0');
    const many = (from: number) => Array.from({ length: 600 }, (_, i) => patient(`p${from + i}`));
    const [first, second] = await Promise.all([
      reads.read('a', many(0)),
      reads.read('a', many(600)),
    ]);
    expect(statements).toHaveLength(2);
    expect([...first.keys()]).toEqual(['Patient/p0']);
    expect(second.size).toBe(0);
  });

  it('fails every read that shared a failed statement, and the next turn works', async () => {
    const { put, reads } = await open();
    await put('a', 'p0', 'A0');
    const failing = new CurrentReads({
      query: () => Promise.reject(new Error('the statement failed')),
    });
    const results = await Promise.allSettled([
      failing.read('a', [patient('p0')]),
      failing.read('b', [patient('p0')]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((await reads.read('a', [patient('p0')])).size).toBe(1);
  });
});
