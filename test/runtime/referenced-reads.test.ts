/**
 * Reads ahead of references through the reference index (runtime/store/referenced-reads.ts):
 * the reads of one turn share a statement, each source gets its own targets, at most
 * MAX_REFERENCED of them, current and not deleted, and a failed statement reads nothing ahead.
 * Run on both engines' SQL, though the store asks for them on PostgreSQL only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REFERENCED, ReferencedReads } from '../../runtime/store/referenced-reads.js';
import { ResourceStore } from '../../runtime/store/resource-store.js';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';

describe.each(await availableEngines())('references read ahead on %s', (engine) => {
  let database: TestDatabase;
  let statements = 0;
  let reads: ReferencedReads;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    const { db } = database;
    await db.query(`INSERT INTO project (id, name) VALUES ('p', 'P'), ('q', 'Q')`);
    const store = new ResourceStore(db);
    const observation = (id: string) => ({
      resourceType: 'Observation',
      id,
      status: 'final',
      code: { text: 'weight' },
    });
    const list = (id: string, targets: string[]) => ({
      resourceType: 'List',
      id,
      status: 'current',
      mode: 'working',
      entry: targets.map((target) => ({ item: { reference: `Observation/${target}` } })),
    });
    const many = Array.from({ length: MAX_REFERENCED + 20 }, (_, i) => `m${i}`);
    await store.write(
      'p',
      [...['a', 'b', 'c', 'gone'], ...many].map((id) => ({
        kind: 'update' as const,
        resourceType: 'Observation',
        id,
        resource: observation(id),
      })),
    );
    await store.write('p', [
      {
        kind: 'update',
        resourceType: 'List',
        id: 'one',
        resource: list('one', ['a', 'b', 'gone']),
      },
      { kind: 'update', resourceType: 'List', id: 'two', resource: list('two', ['c', 'x']) },
      { kind: 'update', resourceType: 'List', id: 'many', resource: list('many', many) },
      { kind: 'delete', resourceType: 'Observation', id: 'gone' },
    ]);
    // The other project has an Observation `x` too: never read for project p's List.
    await store.write('q', [
      { kind: 'update', resourceType: 'Observation', id: 'x', resource: observation('x') },
    ]);
    reads = new ReferencedReads({
      query: (text, values, options) => (statements++, db.query(text, values, options)),
    });
  });
  afterAll(() => database?.drop());

  it('reads the targets of several resources in one statement, each its own', async () => {
    statements = 0;
    const [one, two, none] = await Promise.all([
      reads.read('p', 'List', 'one', ['item']),
      reads.read('p', 'List', 'two', ['item']),
      reads.read('p', 'List', 'missing', ['item']),
    ]);
    expect(statements).toBe(1);
    expect([...one.keys()].sort()).toEqual(['Observation/a', 'Observation/b']);
    expect(one.get('Observation/a')).toMatchObject({ resourceType: 'Observation', id: 'a' });
    expect([...two.keys()]).toEqual(['Observation/c']);
    expect(none.size).toBe(0);
  });

  it('reads at most MAX_REFERENCED targets of one resource', async () => {
    const found = await reads.read('p', 'List', 'many', ['item']);
    expect(found.size).toBe(MAX_REFERENCED);
  });

  it('reads only through the parameters asked for, in the project asked for', async () => {
    expect((await reads.read('p', 'List', 'one', ['subject'])).size).toBe(0);
    expect((await reads.read('q', 'List', 'one', ['item'])).size).toBe(0);
  });

  it('reads nothing ahead when the statement fails', async () => {
    const failing = new ReferencedReads({ query: () => Promise.reject(new Error('down')) });
    expect((await failing.read('p', 'List', 'one', ['item'])).size).toBe(0);
  });
});
