import type { StoreHarness, TestDatabase } from '../conformance/harness.ts';
import { openStore } from '../open-store.ts';
import { PostgresDriver } from './postgres-driver.ts';

export const postgresTestUrl = process.env.QUARRY_TEST_PG_URL;

/**
 * Why the PostgreSQL tests cannot run here, or null when they can. Under `CI=true` a missing
 * server is an error, never a skip.
 */
export function postgresSkipReason(): string | null {
  const backends = (process.env.STORE_BACKENDS ?? 'sqlite,postgres').split(',').map((name) => name.trim());
  if (!backends.includes('postgres')) return 'STORE_BACKENDS does not include postgres';
  if (!postgresTestUrl) {
    if (process.env.CI === 'true')
      throw new Error('CI=true but QUARRY_TEST_PG_URL is not set: the PostgreSQL tests must run in CI.');
    return 'QUARRY_TEST_PG_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)';
  }
  return null;
}

function withSchema(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('schema', schema);
  return parsed.toString();
}

/** Each database is a new schema, dropped afterwards, so runs and tests never collide. */
export const postgresHarness: StoreHarness = {
  name: 'postgres',
  async create(options = {}) {
    const schema = `quarry_t_${Math.random().toString(36).slice(2, 10)}`;
    const url = postgresTestUrl!;
    const store = await openStore({ db: url, schema, targetSchemaVersion: options.targetSchemaVersion });
    const opened = [store];
    const raw = new PostgresDriver(url, { schema });
    const database: TestDatabase & { schema: string } = {
      schema,
      location: withSchema(url, schema),
      store,
      async openAnother() {
        const another = await openStore({ db: url, schema, targetSchemaVersion: options.targetSchemaVersion });
        opened.push(another);
        return another;
      },
      query: (sql, params = []) => raw.query(sql, params),
      async destroy() {
        for (const each of opened) await each.close().catch(() => undefined);
        await raw.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await raw.close();
      },
    };
    return database;
  },
  async reopenLatest(database) {
    return openStore({ db: postgresTestUrl!, schema: (database as TestDatabase & { schema: string }).schema });
  },
};
