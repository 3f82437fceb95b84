import { resolve } from 'node:path';
import { isPostgresUrl } from '../config/quarry-config.ts';
import { type RetryOptions, withRetry } from '../shared/retry.ts';
import type { CheckpointTables } from './checkpoint-tables.ts';
import { migrateOrThrow } from './migrations/run-migrations.ts';
import type { SqlDriver } from './sql/sql-driver.ts';
import { SqlStore } from './sql/sql-store.ts';
import type { SqliteDriverOptions } from './sqlite/sqlite-driver.ts';
import type { Store } from './store.ts';
import { validatingStore } from './validating-store.ts';

export interface OpenStoreOptions {
  /** A SQLite file path or a `postgres://` URL (`QuarryConfig.db`). */
  db: string;
  /** PostgreSQL schema; default the URL's `?schema=` parameter, else `public`. */
  schema?: string;
  /** SQLite durability; default `NORMAL`. */
  synchronous?: SqliteDriverOptions['synchronous'];
  /** Create a SQLite file's missing folder (0700): for Quarry's own data folder, never a path a user typed. */
  createFolder?: boolean;
  /** Stop migrations at this version (tests of upgrades). */
  targetSchemaVersion?: number;
  /**
   * How long to wait for a database that cannot be reached yet (a PostgreSQL restart): tries in all
   * and a note before each wait. Default 6 tries over about 15 seconds.
   */
  retry?: Pick<RetryOptions, 'attempts' | 'onRetry' | 'clock'>;
  /** PostgreSQL: connections opened before the store is returned (default 1, to check the server). */
  openConnections?: number;
}

/** Opens the driver for a location; `schema` in a PostgreSQL URL is Quarry's, not libpq's. */
export async function openDriver(location: string, options: Omit<OpenStoreOptions, 'db'> = {}): Promise<SqlDriver> {
  // Each driver loads its database client only when a store of its kind is opened.
  if (!isPostgresUrl(location)) {
    const { SqliteDriver } = await import('./sqlite/sqlite-driver.ts');
    return new SqliteDriver(location, { synchronous: options.synchronous, createFolder: options.createFolder });
  }
  const { PostgresDriver } = await import('./postgres/postgres-driver.ts');
  const url = new URL(location);
  const schema = options.schema ?? url.searchParams.get('schema') ?? undefined;
  url.searchParams.delete('schema');
  const driver = new PostgresDriver(url.toString(), { schema });
  await driver.connect(options.openConnections);
  return driver;
}

const SAVER_CONNECTIONS = 5;

/** A store and LangGraph's checkpoint tables on the same connection (for `quarry/langgraph`). */
export async function openCheckpointStore(
  options: OpenStoreOptions,
): Promise<{ store: Store; tables: CheckpointTables }> {
  // A graph's parallel nodes write at once: their connections are opened now, not while the first
  // writes wait for them (bench/compare/compare-saver-crash.ts, a kill early in a fresh process).
  const sql = await openSqlStore({ openConnections: SAVER_CONNECTIONS, ...options });
  return { store: validatingStore(sql), tables: sql.checkpointTables() };
}

/**
 * Opens (creating and migrating on first use) the store at the configured location, with input
 * validation in front of the backend.
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  return validatingStore(await openSqlStore(options));
}

async function openSqlStore(options: OpenStoreOptions): Promise<SqlStore> {
  // `:memory:` is SQLite's in-memory database, not a file in the working folder.
  const location = isPostgresUrl(options.db) || options.db === ':memory:' ? options.db : resolve(options.db);
  return withRetry(
    async () => {
      const driver = await openDriver(location, options);
      try {
        const version = await migrateOrThrow(driver, { targetVersion: options.targetSchemaVersion });
        return new SqlStore(driver, version);
      } catch (error) {
        await driver.close().catch(() => undefined);
        throw error;
      }
    },
    { attempts: 6, baseDelayMs: 500, maxDelayMs: 4_000, ...options.retry },
  );
}
