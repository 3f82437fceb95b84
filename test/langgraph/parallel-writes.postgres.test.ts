import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.ts';
import { migrateOrThrow } from '../../src/store/migrations/run-migrations.ts';
import { PostgresDriver } from '../../src/store/postgres/postgres-driver.ts';
import { postgresSkipReason, postgresTestUrl } from '../../src/store/postgres/postgres-harness.ts';
import { SqlStore } from '../../src/store/sql/sql-store.ts';
import { within } from '../support/bounds.ts';

const skip = postgresSkipReason();

describe.skipIf(skip !== null)(`LangGraph writes in parallel on PostgreSQL${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('parallel tasks writing the same new values in different orders never deadlock', {
    timeout: within(60_000),
  }, async () => {
    const schema = `quarry_lgw_${Math.random().toString(36).slice(2, 10)}`;
    // Every transaction the driver repeats after a conflict (a deadlock is one) waits on this clock first.
    let retries = 0;
    const driver = new PostgresDriver(postgresTestUrl!, {
      schema,
      clock: {
        now: systemClock.now,
        sleep: (ms, signal) => {
          retries++;
          return systemClock.sleep(ms, signal);
        },
      },
    });
    cleanups.push(async () => {
      await driver.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await driver.close();
    });
    await driver.connect();
    const store = new SqlStore(driver, await migrateOrThrow(driver));
    const tables = store.checkpointTables();
    const session = await store.createSession({
      ownerId: 'local',
      title: 'thread',
      question: 'thread',
      workflow: { name: 'langgraph', version: 1 },
      status: 'interrupted',
    });
    const bytes = (text: string) => new TextEncoder().encode(text);
    // Each superstep: eight tasks write the same two new values, half of them in the other order
    // (as parallel nodes returning `{ status, results }` and `{ results, status }` do).
    for (let step = 0; step < 15; step++) {
      const values = [bytes(`results of step ${step}`), bytes(`status of step ${step}`)];
      await Promise.all(
        Array.from({ length: 8 }, (_, task) =>
          tables.putWrites(
            session.id,
            '',
            `checkpoint-${step}`,
            (task % 2 ? values : [...values].reverse()).map((value, idx) => ({
              taskId: `task-${task}`,
              idx,
              channel: idx === 0 ? 'results' : 'status',
              valueType: 'json',
              value,
              taskPath: '',
            })),
          ),
        ),
      );
      expect(await tables.readWrites(session.id, '', `checkpoint-${step}`)).toHaveLength(16);
    }
    expect(retries).toBe(0);
  });
});
