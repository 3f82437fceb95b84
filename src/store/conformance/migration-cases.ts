import { expect, it } from 'vitest';
import { latestSchemaVersion } from '../migrations/index.ts';
import { createTestSession, type StoreHarness } from './harness.ts';

export function migrationCases(harness: StoreHarness): void {
  it('migrates a database made by an older schema version, keeping its data', async () => {
    const database = await harness.create({ targetSchemaVersion: 1 });
    try {
      expect(database.store.info().schemaVersion).toBe(1);
      // Written as version 1 code wrote it: today's code targets the latest schema only.
      const session = { id: 'made-under-v1' };
      await database.query(
        `INSERT INTO sessions (id, owner_id, title, question, status, settings, workflow_name, workflow_version, created_at, updated_at)
         VALUES (?, 'local', 'Made under version 1', 'What is kept?', 'completed', '{}', 'test', 1, 1, 1)`,
        [session.id],
      );
      await database.store.close();
      const upgraded = await harness.reopenLatest(database);
      try {
        expect(upgraded.info().schemaVersion).toBe(latestSchemaVersion);
        expect((await upgraded.getSession(session.id)).title).toBe('Made under version 1');
        await upgraded.upsertSource({ sessionId: session.id, url: 'https://example.org/' });
        expect(await upgraded.listSources(session.id)).toHaveLength(1);
      } finally {
        await upgraded.close();
      }
    } finally {
      await database.destroy();
    }
  });

  it('applies each migration once when several processes open the store at once', async () => {
    const database = await harness.create({ targetSchemaVersion: 1 });
    try {
      const stores = await Promise.all([
        harness.reopenLatest(database),
        harness.reopenLatest(database),
        harness.reopenLatest(database),
      ]);
      const rows = await database.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((row) => Number(row.version))).toEqual(
        Array.from({ length: latestSchemaVersion }, (_, index) => index + 1),
      );
      for (const store of stores) await store.close();
    } finally {
      await database.destroy();
    }
  });

  it('refuses every call after close with STORE_UNAVAILABLE, also one made while closing', async () => {
    const database = await harness.create();
    try {
      const store = await database.openAnother();
      const session = await createTestSession(store);
      const closing = store.close();
      const during = store.getSession(session.id).then(
        () => 'read',
        (error: unknown) => error,
      );
      await closing;
      await store.close();
      for (const call of [
        () => store.getSession(session.id),
        () => store.touchDocument({ path: '/late.md', mtimeMs: 1, size: 1 }),
        () => store.listSessions(),
      ]) {
        await expect(call()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      }
      // A call made as the store was closing either ran before it closed or was refused the same way.
      const outcome = await during;
      if (outcome !== 'read') expect(outcome).toMatchObject({ code: 'STORE_UNAVAILABLE' });
      // The database itself is untouched: another connection reads the session.
      expect((await database.store.getSession(session.id)).id).toBe(session.id);
    } finally {
      await database.destroy();
    }
  });
}
