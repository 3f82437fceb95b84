import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Runner } from '../../src/engine/runner.ts';
import { localServiceContext } from '../../src/service/local-context.ts';
import { migrateStore } from '../../src/service/migrate-store.ts';
import { createWorkflowRegistry } from '../../src/service/research-runtime.ts';
import { askSession, startResearch } from '../../src/service/start-research.ts';
import type { TestDatabase } from '../../src/store/conformance/harness.ts';
import { postgresHarness, postgresSkipReason } from '../../src/store/postgres/postgres-harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { testConfig } from '../support/test-config.ts';

const fixtures = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));
const skip = postgresSkipReason();

describe.skipIf(skip !== null)(`migrating a SQLite store to PostgreSQL${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let sqlite: TestDatabase;
  let postgres: TestDatabase;
  let docs: string;
  beforeEach(async () => {
    sqlite = await sqliteHarness.create();
    postgres = await postgresHarness.create();
    docs = mkdtempSync(join(tmpdir(), 'quarry-migrate-'));
    cpSync(fixtures, docs, { recursive: true });
  });
  afterEach(async () => {
    await sqlite.destroy();
    await postgres.destroy();
    rmSync(docs, { recursive: true, force: true });
  });

  it('copies sessions and users, and an unfinished session resumes on the new store', async () => {
    const context = localServiceContext(sqlite.store, testConfig());
    const done = (await startResearch(context, { question: 'How does tidal power work?', docs: [docs] })).session;
    await new Runner({
      store: sqlite.store,
      workflows: createWorkflowRegistry(sqlite.store, testConfig()),
      log: () => undefined,
    }).runSession(done.id);
    const waiting = (
      await startResearch(context, {
        question: 'Where are tidal stations?',
        docs: [docs],
        settings: { reviewOutline: true },
      })
    ).session;
    expect(
      (
        await new Runner({
          store: sqlite.store,
          workflows: createWorkflowRegistry(sqlite.store, testConfig()),
          log: () => undefined,
        }).runSession(waiting.id)
      ).status,
    ).toBe('waiting');
    const ada = await sqlite.store.createUser({ name: 'ada' });

    const result = await migrateStore(sqlite.store, postgres.store);
    expect(result.users).toBe(1);
    expect(result.sessions.map((session) => session.status)).toEqual(['copied', 'copied']);
    expect((await postgres.store.listUsers()).map((user) => user.id)).toEqual([ada.id]);
    expect((await postgres.store.getSession(done.id)).status).toBe('completed');
    expect(await postgres.store.loadJournal((await postgres.store.getSession(done.id)).currentRunId!)).toEqual(
      await sqlite.store.loadJournal(done.currentRunId!),
    );
    // Migrating again changes nothing.
    expect(
      (await migrateStore(sqlite.store, postgres.store)).sessions.every((session) => session.status === 'skipped'),
    ).toBe(true);

    const target = localServiceContext(postgres.store, testConfig());
    expect((await askSession(target, { sessionId: waiting.id, text: 'approve' })).kind).toBe('answer');
    const resumed = await new Runner({
      store: postgres.store,
      workflows: createWorkflowRegistry(postgres.store, testConfig()),
      log: () => undefined,
    }).runSession(waiting.id);
    expect(resumed.status).toBe('completed');
  });
});
