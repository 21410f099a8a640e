/**
 * A transaction PostgreSQL ends because of another one running at the same time (a deadlock) is
 * the client's to retry: 409, not an internal error (database-errors.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FhirError } from '../../runtime/model/fhir-error.js';
import { classifyDatabaseError } from '../../runtime/store/database-errors.js';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';

const engines = await availableEngines();

describe.runIf(engines.includes('postgres'))('transactions that deadlock, PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    await database.db.exec(
      'CREATE TABLE clash (id integer PRIMARY KEY); INSERT INTO clash VALUES (1), (2)',
    );
  });
  afterAll(() => database?.drop());

  it('end one of them, which answers 409', async () => {
    const { db } = database;
    let arrived = 0;
    let release!: () => void;
    const bothHoldOne = new Promise<void>((resolve) => (release = resolve));
    const lockInOrder = (first: number, second: number) =>
      db.transaction(async (tx) => {
        await tx.query('UPDATE clash SET id = id WHERE id = $1', [first]);
        if (++arrived === 2) release();
        await bothHoldOne;
        await tx.query('UPDATE clash SET id = id WHERE id = $1', [second]);
      });
    const outcomes = await Promise.allSettled([lockInOrder(1, 2), lockInOrder(2, 1)]);
    const failed = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(failed).toHaveLength(1);
    const error = classifyDatabaseError((failed[0] as PromiseRejectedResult).reason);
    expect(error).toBeInstanceOf(FhirError);
    expect((error as FhirError).status).toBe(409);
  });
});
