import { isRetryable, QuarryError } from '../../shared/errors.ts';
import type { SqlDriver } from '../sql/sql-driver.ts';
import { migrations as allMigrations } from './index.ts';
import type { Migration, MigrationResult } from './migration.ts';

const typeNames = {
  sqlite: { bigint: 'INTEGER', bytes: 'BLOB', serial: 'INTEGER PRIMARY KEY AUTOINCREMENT' },
  postgres: { bigint: 'BIGINT', bytes: 'BYTEA', serial: 'BIGSERIAL PRIMARY KEY' },
} as const;

export function renderMigration(script: string, dialect: keyof typeof typeNames): string {
  return script.replace(
    /\{\{(bigint|bytes|serial)\}\}/g,
    (_, name: keyof (typeof typeNames)['sqlite']) => typeNames[dialect][name],
  );
}

export interface RunMigrationsOptions {
  /** Stop after this version (tests build older schemas with it). Default: the latest. */
  targetVersion?: number;
  migrations?: readonly Migration[];
}

/**
 * Brings the database to the target version, one transaction per migration under a database-wide
 * lock, so several processes starting at once apply each migration exactly once. Refuses a
 * database whose schema is newer than this code knows (`SCHEMA_TOO_NEW`).
 */
export async function runMigrations(driver: SqlDriver, options: RunMigrationsOptions = {}): Promise<MigrationResult[]> {
  const migrations = options.migrations ?? allMigrations;
  const target = options.targetVersion ?? migrations.length;
  await driver.transaction(async (tx) => {
    await driver.lockForMigration(tx);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at ${typeNames[driver.dialect.name].bigint} NOT NULL)`,
    );
  });
  const results: MigrationResult[] = [];
  for (const migration of migrations) {
    if (migration.version > target) break;
    const result = await driver
      .transaction(async (tx): Promise<MigrationResult> => {
        await driver.lockForMigration(tx);
        const applied = await tx.query('SELECT version FROM schema_migrations WHERE version = ?', [migration.version]);
        if (applied.length > 0) return { version: migration.version, name: migration.name, status: 'already-applied' };
        await driver.execScript(tx, renderMigration(migration.script, driver.dialect.name));
        const extra = migration.dialects?.[driver.dialect.name];
        if (extra) await driver.execScript(tx, renderMigration(extra, driver.dialect.name));
        await tx.query(
          `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ${driver.dialect.nowMs})`,
          [migration.version, migration.name],
        );
        return { version: migration.version, name: migration.name, status: 'applied' };
      })
      .catch((error: unknown): MigrationResult => {
        // A lost connection is no failure of the migration: the caller may wait and try again.
        if (isRetryable(error)) throw error;
        return { version: migration.version, name: migration.name, status: 'failed', error: (error as Error).message };
      });
    results.push(result);
    if (result.status === 'failed') break;
  }
  return results;
}

/** The highest applied version (0 for an empty database). */
export async function readSchemaVersion(driver: SqlDriver): Promise<number> {
  const rows = await driver.query<{ version: number | null }>('SELECT MAX(version) AS version FROM schema_migrations');
  return Number(rows[0]?.version ?? 0);
}

/** The applied version when the migrations table exists, else null (a new database). */
async function appliedVersion(driver: SqlDriver): Promise<number | null> {
  try {
    return await readSchemaVersion(driver);
  } catch (error) {
    if (isRetryable(error)) throw error;
    return null;
  }
}

/**
 * Runs the migrations and throws one clear error if any failed or the schema is too new. A store
 * already at the target version costs one query (every command opens the store).
 */
export async function migrateOrThrow(driver: SqlDriver, options: RunMigrationsOptions = {}): Promise<number> {
  const migrations = options.migrations ?? allMigrations;
  const target = options.targetVersion ?? migrations.length;
  const current = await appliedVersion(driver);
  if (current !== null && current > migrations.length) throw schemaTooNew(driver, current, migrations.length);
  if (current !== null && current >= target) return current;
  const results = await runMigrations(driver, options);
  const failed = results.find((result) => result.status === 'failed');
  if (failed) {
    throw new QuarryError(
      'STORE_UNAVAILABLE',
      `Migration ${failed.version} (${failed.name}) failed on ${driver.location}: ${failed.error}`,
      { details: { location: driver.location, version: failed.version } },
    );
  }
  const version = await readSchemaVersion(driver);
  if (version > migrations.length) throw schemaTooNew(driver, version, migrations.length);
  return version;
}

function schemaTooNew(driver: SqlDriver, version: number, known: number): QuarryError {
  return new QuarryError(
    'SCHEMA_TOO_NEW',
    `The store at ${driver.location} has schema version ${version}, newer than this Quarry knows (${known}). Upgrade Quarry.`,
    { details: { location: driver.location, version } },
  );
}
