import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../test/support/test-config.ts';
import { Runner } from '../engine/runner.ts';
import { indexFolders } from '../providers/search/local-corpus/index-folders.ts';
import type { ResearchOutput } from '../research/research-types.ts';
import type { TestDatabase } from '../store/conformance/harness.ts';
import { sqliteHarness } from '../store/sqlite/sqlite-harness.ts';
import { localServiceContext } from './local-context.ts';
import { createWorkflowRegistry } from './research-runtime.ts';
import { exportSession, importSessionFile } from './session-export.ts';

const legacyFile = fileURLToPath(new URL('../../test/fixtures/legacy/half-finished.json', import.meta.url));
const corpus = fileURLToPath(new URL('../../test/fixtures/corpus/', import.meta.url));

describe('legacy per-session JSON', () => {
  let database: TestDatabase;
  let folder: string;
  beforeEach(async () => {
    database = await sqliteHarness.create();
    folder = mkdtempSync(join(tmpdir(), 'quarry-legacy-'));
    cpSync(corpus, folder, { recursive: true });
  });
  afterEach(async () => {
    await database.destroy();
    rmSync(folder, { recursive: true, force: true });
  });

  it('imports a half-finished session that resumes at the next iteration with its queries, contexts and plan', async () => {
    const context = localServiceContext(database.store, testConfig());
    const { session } = await importSessionFile(context, readFileSync(legacyFile, 'utf8'));
    expect(session).toMatchObject({
      id: '20240611-141502-tidal',
      status: 'interrupted',
      question: 'How does tidal power generate electricity?',
      settings: { maxIterations: 2, sourcesPerQuery: 2, systemInstruction: 'Write for a general audience.' },
    });
    const imported = await database.store.loadJournal(session.currentRunId!);
    expect(imported.map((step) => step.key)).toEqual([
      'title',
      'title/apply',
      'plan',
      'iteration-1/search-0',
      'iteration-1/search-1',
      'iteration-1/read-0',
      'iteration-1/read-1',
      'iteration-1/notes-0',
      'iteration-1/notes-1',
      'iteration-1/findings',
      'iteration-1/analyze',
    ]);
    // The imported session searched the web; here it continues over local documents.
    await indexFolders(database.store, [folder]);
    await database.store.updateSession(session.id, { settings: { ...session.settings, docs: [folder] } });
    const result = await new Runner({
      store: database.store,
      workflows: createWorkflowRegistry(database.store, testConfig()),
      log: () => undefined,
    }).runSession(session.id);
    expect(result.status, JSON.stringify(result.error)).toBe('completed');
    const journal = await database.store.loadJournal(session.currentRunId!);
    for (const step of journal.filter((each) => each.key.startsWith('iteration-1/')))
      expect(step.attempts, step.key).toBe(1);
    expect(journal.find((step) => step.key === 'iteration-2/search-0')?.input).toEqual({
      query: 'tidal stream turbines',
    });
    expect(journal.find((step) => step.key === 'iteration-2/search-1')?.input).toEqual({
      query: 'Sihwa Lake tidal station',
    });
    expect(journal.some((step) => step.key.startsWith('iteration-3/'))).toBe(false);
    const report = (result.output as ResearchOutput).report!;
    // What the legacy session gathered before it stopped is cited beside what was found after.
    expect(report).toContain('https://example.org/barrages');
    expect(report).toContain('tidal-energy.txt');

    const legacy = JSON.parse(
      (await exportSession(context, { sessionId: session.id, format: 'legacy-json' })).body,
    ) as Record<string, any>;
    expect(legacy).toMatchObject({
      session_id: session.id,
      status: 'completed',
      user_query: 'How does tidal power generate electricity?',
      aggregated_data: { last_completed_iteration: 2 },
    });
    expect(legacy.iterations.map((iteration: { search_queries: string[] }) => iteration.search_queries)).toEqual([
      ['tidal barrage how it works', 'first tidal power station'],
      ['tidal stream turbines', 'Sihwa Lake tidal station'],
    ]);
    expect(legacy.iterations[0].contexts_gathered[1]).toMatchObject({
      url: 'https://example.org/la-rance',
      query: 'first tidal power station',
    });
    expect(legacy.final_report).toBe(report);
  });

  it('refuses a malformed legacy file, writing nothing', async () => {
    const context = localServiceContext(database.store, testConfig());
    const broken = JSON.parse(readFileSync(legacyFile, 'utf8')) as Record<string, any>;
    broken.iterations[1].iteration_number = 5;
    await expect(importSessionFile(context, JSON.stringify(broken))).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('without gaps'),
    });
    delete broken.user_query;
    await expect(importSessionFile(context, JSON.stringify({ ...broken, user_query: 7 }))).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'user_query' },
    });
    expect((await database.store.listSessions()).sessions).toEqual([]);
  });
});
