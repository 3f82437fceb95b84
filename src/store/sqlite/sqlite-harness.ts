import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreHarness, TestDatabase } from '../conformance/harness.ts';
import { openStore } from '../open-store.ts';
import { SqliteDriver } from './sqlite-driver.ts';

/** Each database is a new file in a new temporary folder. */
export const sqliteHarness: StoreHarness = {
  name: 'sqlite',
  async create(options = {}) {
    const folder = mkdtempSync(join(tmpdir(), 'quarry-test-'));
    const path = join(folder, 'quarry.db');
    const store = await openStore({ db: path, targetSchemaVersion: options.targetSchemaVersion });
    const opened = [store];
    const raw = new SqliteDriver(path);
    const database: TestDatabase & { path: string } = {
      path,
      location: path,
      store,
      async openAnother() {
        const another = await openStore({ db: path, targetSchemaVersion: options.targetSchemaVersion });
        opened.push(another);
        return another;
      },
      query: (sql, params = []) => raw.query(sql, params),
      async destroy() {
        for (const each of opened) await each.close().catch(() => undefined);
        await raw.close();
        rmSync(folder, { recursive: true, force: true });
      },
    };
    return database;
  },
  async reopenLatest(database) {
    return openStore({ db: (database as TestDatabase & { path: string }).path });
  },
};
