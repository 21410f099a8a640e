/**
 * The event loop keeps turning while PostgreSQL statements are out (runtime/store/busy-poll.ts),
 * for at most the set time past the last one sent, and not at all when it is 0.
 */
import { describe, expect, it } from 'vitest';
import { countImmediates } from '../support/immediates.js';
import { BusyPoll } from '../../runtime/store/busy-poll.js';
import { availableEngines, createTestDatabase } from '../support/test-databases.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const immediates = countImmediates();

describe('busy polling', () => {
  it('keeps the loop turning while a statement is out, and stops when its reply is in', async () => {
    const end = new BusyPoll(1_000_000).begin();
    await sleep(10);
    expect(immediates.count).toBeGreaterThan(50);
    end();
    await sleep(1);
    const afterReply = immediates.count;
    await sleep(10);
    expect(immediates.count).toBe(afterReply);
  });

  it('stops after the set time, though the reply is still out', async () => {
    const end = new BusyPoll(5_000).begin();
    await sleep(20);
    const stopped = immediates.count;
    expect(stopped).toBeGreaterThan(0);
    await sleep(10);
    expect(immediates.count).toBe(stopped);
    end();
  });

  it('never polls when set to 0', async () => {
    const end = new BusyPoll(0).begin();
    await sleep(5);
    end();
    expect(immediates.count).toBe(0);
  });
});

describe.runIf((await availableEngines()).includes('postgres'))(
  'busy polling on PostgreSQL',
  () => {
    it('polls while statements run, in and out of transactions, and answers as before', async () => {
      const { db, drop } = await createTestDatabase('postgres', {
        migrated: false,
        busyPollMicroseconds: 500,
      });
      immediates.reset();
      try {
        const { rows } = await db.query("SELECT pg_sleep(0.002)::text AS slept, 'done' AS said");
        expect(rows).toEqual([{ slept: '', said: 'done' }]);
        expect(immediates.count).toBeGreaterThan(0);
        immediates.reset();
        const inTransaction = await db.transaction((tx) => tx.query('SELECT 1 AS one'));
        expect(inTransaction.rows).toEqual([{ one: 1 }]);
        expect(immediates.count).toBeGreaterThan(0);
      } finally {
        await drop();
      }
    });

    it('sleeps for statements and transactions asked not to poll', async () => {
      const { db, drop } = await createTestDatabase('postgres', {
        migrated: false,
        busyPollMicroseconds: 500,
      });
      try {
        immediates.reset();
        const { rows } = await db.query('SELECT pg_sleep(0.002)::text AS slept', [], {
          poll: false,
        });
        expect(rows).toEqual([{ slept: '' }]);
        const inTransaction = await db.transaction(
          (tx) => tx.query('SELECT pg_sleep(0.002)::text AS slept'),
          { poll: false },
        );
        expect(inTransaction.rows).toEqual([{ slept: '' }]);
        expect(immediates.count).toBe(0);
      } finally {
        await drop();
      }
    });
  },
);
