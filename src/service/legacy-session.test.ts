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
const persistencePlanFile = fileURLToPath(new URL('../../test/fixtures/legacy/persistence-plan.json', import.meta.url));
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
    // Nothing is forged into the journal: the earlier tool's work travels as the run's input.
    expect(await database.store.loadJournal(session.currentRunId!)).toEqual([]);
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
    // It carries the first iteration on and continues at the second with the last plan's queries.
    expect(journal.slice(0, 4).map((step) => step.key)).toEqual([
      'title',
      'title/apply',
      'carried',
      'iteration-2/search-0',
    ]);
    expect(journal.some((step) => step.key === 'plan' || step.key.startsWith('iteration-1/'))).toBe(false);
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
      (await exportSession(context, { sessionId: session.id, format: 'legacy-json' })).body as string,
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

  it('imports the persistence plan layout (summaries as strings, a web provider without a key) and writes it back', async () => {
    const context = localServiceContext(database.store, testConfig());
    const original = JSON.parse(readFileSync(persistencePlanFile, 'utf8')) as Record<string, any>;
    const { session, droppedProviders } = await importSessionFile(context, JSON.stringify(original));
    // A file left "running" by a killed process is interrupted; Jina has no key here, so it is left out.
    expect(session).toMatchObject({ status: 'interrupted', settings: { search: [], docs: [] } });
    expect(droppedProviders).toEqual(['jina']);
    await indexFolders(database.store, [folder]);
    await database.store.updateSession(session.id, { settings: { ...session.settings, docs: [folder] } });
    const result = await new Runner({
      store: database.store,
      workflows: createWorkflowRegistry(database.store, testConfig()),
      log: () => undefined,
    }).runSession(session.id);
    expect(result.status, JSON.stringify(result.error)).toBe('completed');
    const journal = await database.store.loadJournal(session.currentRunId!);
    expect(journal.find((step) => step.key === 'iteration-2/search-0')?.input).toEqual({
      query: 'caldera versus crater difference',
    });
    // The earlier tool's pages are the session's notes and sources beside the documents read here.
    const output = result.output as ResearchOutput;
    expect(output.notes.map((note) => note.url)).toContain('https://volcanoes.example.net/crater-lake');
    expect(output.report).toContain('volcanoes.md');
    const sources = await database.store.listSources(session.id);
    expect(sources.map((source) => source.url)).toContain('https://volcanoes.example.net/calderas');

    const exported = JSON.parse(
      (await exportSession(context, { sessionId: session.id, format: 'legacy-json' })).body as string,
    ) as Record<string, any>;
    // The layout its document specifies: the earlier iteration as it was, summaries as strings.
    expect(exported.iterations[0]).toEqual(
      expect.objectContaining({
        iteration_number: 1,
        search_queries: original.iterations[0].search_queries,
        contexts_gathered: original.iterations[0].contexts_gathered,
        next_plan: original.iterations[0].next_plan,
      }),
    );
    expect(exported.iterations[1].search_queries[0]).toBe('caldera versus crater difference');
    expect(exported.aggregated_data.aggregated_contexts.length).toBeGreaterThan(2);
    for (const summary of exported.aggregated_data.aggregated_contexts) expect(typeof summary).toBe('string');
    expect(exported.aggregated_data.aggregated_contexts).toEqual(
      expect.arrayContaining(original.aggregated_data.aggregated_contexts),
    );
    // What Quarry writes in that layout, Quarry reads back.
    await database.store.deleteSession(session.id);
    const again = await importSessionFile(context, JSON.stringify(exported));
    expect(again.session).toMatchObject({ id: session.id, status: 'completed' });
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
