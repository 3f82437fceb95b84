import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { migrateOrThrow } from './migrations/run-migrations.ts';
import { PostgresDriver } from './postgres/postgres-driver.ts';
import { SqlStore } from './sql/sql-store.ts';
import type { SqlDriver } from './sql/sql-driver.ts';
import { SqliteDriver, type SqliteDriverOptions } from './sqlite/sqlite-driver.ts';
import type { Store } from './store.ts';
import { validatingStore } from './validating-store.ts';

export interface OpenStoreOptions {
  /** A file path or a `postgres://` URL; default `QUARRY_DB`, else `$QUARRY_HOME/quarry.db`. */
  db?: string;
  /** Environment to read `QUARRY_DB` and `QUARRY_HOME` from; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** PostgreSQL schema; default the URL's `?schema=` parameter, else `public`. */
  schema?: string;
  /** SQLite durability; default `NORMAL`. */
  synchronous?: SqliteDriverOptions['synchronous'];
  /** Stop migrations at this version (tests of upgrades). */
  targetSchemaVersion?: number;
}

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** Where the store lives: the explicit option, then `QUARRY_DB`, then `$QUARRY_HOME/quarry.db`. */
export function resolveStoreLocation(options: OpenStoreOptions = {}): string {
  const env = options.env ?? process.env;
  const location = options.db ?? env.QUARRY_DB;
  if (location) return isPostgresUrl(location) ? location : resolve(location);
  const home = env.QUARRY_HOME ?? join(homedir(), '.quarry');
  return join(resolve(home), 'quarry.db');
}

/** Opens the driver for a location; `schema` in a PostgreSQL URL is Quarry's, not libpq's. */
export async function openDriver(location: string, options: OpenStoreOptions = {}): Promise<SqlDriver> {
  if (!isPostgresUrl(location)) return new SqliteDriver(location, { synchronous: options.synchronous });
  const url = new URL(location);
  const schema = options.schema ?? url.searchParams.get('schema') ?? undefined;
  url.searchParams.delete('schema');
  const driver = new PostgresDriver(url.toString(), { schema });
  await driver.connect();
  return driver;
}

/**
 * Opens (creating and migrating on first use) the store at the configured location, with input
 * validation in front of the backend.
 */
export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  const driver = await openDriver(resolveStoreLocation(options), options);
  try {
    const version = await migrateOrThrow(driver, { targetVersion: options.targetSchemaVersion });
    return validatingStore(new SqlStore(driver, version));
  } catch (error) {
    await driver.close().catch(() => undefined);
    throw error;
  }
}
