import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../test/support/test-config.ts';
import type { TestDatabase } from '../store/conformance/harness.ts';
import { sqliteHarness } from '../store/sqlite/sqlite-harness.ts';
import { backgroundIndexer, documentRoots } from './document-folders.ts';
import { localServiceContext } from './local-context.ts';
import { checkQuestion, requestSources, researchSettings } from './research-request.ts';
import type { ServiceContext } from './service-context.ts';
import { forkSession, planResume, stopSession } from './session-control.ts';
import { collectGarbage, parseDuration, renameSession, resolveSessionId } from './session-queries.ts';
import { updateSession } from './session-settings.ts';
import { askSession, startResearch } from './start-research.ts';

const fixtures = fileURLToPath(new URL('../../test/fixtures/corpus/', import.meta.url));

/**
 * The service functions every interface calls, tested directly: what a request's sources default
 * to, how settings and questions are checked, ids by prefix, idempotent creation, what may change
 * while a session runs, and what a resume or a garbage collection is allowed to touch.
 */
describe('service layer', () => {
  let database: TestDatabase;
  let folder: string;
  let local: ReturnType<typeof localServiceContext>;

  beforeEach(async () => {
    database = await sqliteHarness.create();
    folder = mkdtempSync(join(tmpdir(), 'quarry-service-'));
    cpSync(fixtures, folder, { recursive: true });
    local = localServiceContext(database.store, testConfig({ QUARRY_DOCS: folder }));
  });
  afterEach(async () => {
    await database.destroy();
    rmSync(folder, { recursive: true, force: true });
  });

  /** A server's view: only the operator's folders, per-user limits on. */
  function serverContext(): ServiceContext {
    return {
      ...local,
      folders: { kind: 'roots', roots: documentRoots([join(folder, 'energy'), join(folder, 'nature')]) },
      indexer: backgroundIndexer(database.store, () => undefined),
      enforceLimits: true,
    };
  }

  it('defaults a request to the configured folders, or on a server to every allowed root', () => {
    expect(requestSources(local, {})).toEqual({ docs: [folder], search: [] });
    expect(requestSources(local, { docs: [join(folder, 'energy')] }).docs).toEqual([join(folder, 'energy')]);
    const server = serverContext();
    expect(requestSources(server, {}).docs).toEqual([join(folder, 'energy'), join(folder, 'nature')]);
    expect(requestSources(server, { docs: ['nature'] }).docs).toEqual([join(folder, 'nature')]);
    // Folders named inside settings are checked the same way.
    expect(() => requestSources(server, { settings: { docs: [folder] } })).toThrow(/does not read/);
    expect(() => requestSources(local, { settings: { docs: 'energy' } })).toThrow(/list of strings/);
    expect(() => requestSources(local, { search: ['nope'] })).toThrow(/nope/);
  });

  it('checks questions and fills settings from the configuration, naming the field at fault', () => {
    expect(checkQuestion(local, '  Why?  ')).toBe('Why?');
    expect(() => checkQuestion(local, '   ')).toThrow(/question: must not be empty/);
    const long = 'x'.repeat(serverContext().config.server.limits.questionChars + 1);
    expect(() => checkQuestion(serverContext(), long)).toThrow(/limit/);
    expect(checkQuestion(local, long)).toBe(long);
    const withModel = { ...local, config: { ...local.config, model: 'openai:gpt-4.1-mini' } };
    expect(researchSettings(withModel, { maxIterations: 2 }, { docs: [], search: [] })).toMatchObject({
      model: 'openai:gpt-4.1-mini',
      maxIterations: 2,
    });
    expect(() => researchSettings(local, { maxIterations: 99 }, { docs: [], search: [] })).toThrow(/maxIterations/);
  });

  it('creates once per external id, finds sessions by unique prefix, and parses durations', async () => {
    const first = await startResearch(local, { question: 'How do tides work?', externalId: 'batch-7', start: false });
    const again = await startResearch(local, { question: 'Something else', externalId: 'batch-7' });
    expect(again).toMatchObject({ created: false, session: { id: first.session.id } });
    expect(await resolveSessionId(local, first.session.id.slice(0, 8))).toBe(first.session.id);
    await expect(resolveSessionId(local, 'zzzz')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    expect(parseDuration('7d')).toBe(7 * 24 * 3_600_000);
    expect(() => parseDuration('soon')).toThrow(/--older-than/);
  });

  it('changes settings and titles only while nothing runs, and never resumes a waiting session', async () => {
    const { session } = await startResearch(local, {
      question: 'How does tidal power generate electricity?',
      settings: { reviewOutline: true },
    });
    expect((await local.runner.runSession(session.id)).status).toBe('waiting');
    await expect(planResume(local, { sessionId: session.id })).rejects.toMatchObject({ code: 'SESSION_WAITING' });
    const changed = await updateSession(local, { sessionId: session.id, settings: { maxIterations: 1 } });
    expect(changed.settings).toMatchObject({ maxIterations: 1 });
    await expect(updateSession(local, { sessionId: session.id, settings: { maxIterations: 0 } })).rejects.toMatchObject(
      {
        code: 'INVALID_INPUT',
      },
    );
    expect((await renameSession(local, { sessionId: session.id, title: 'Tides' })).title).toBe('Tides');
    await askSession(local, { sessionId: session.id, text: 'approve' });
    expect((await local.runner.runSession(session.id)).status).toBe('completed');
    // A finished session has nothing to stop.
    expect(await stopSession(local, { sessionId: session.id })).not.toBe('requested');
  });

  it('collects only finished sessions, and interrupted ones only when asked', async () => {
    const parked = await startResearch(local, { question: 'How do tides work?', start: false });
    const done = await startResearch(local, { question: 'How do volcanoes form?' });
    await local.runner.runSession(done.session.id);
    expect((await collectGarbage(local, { olderThan: '0s', dryRun: true })).deleted).toBe(1);
    expect((await collectGarbage(local, { olderThan: '0s', includeInterrupted: true, dryRun: true })).deleted).toBe(2);
    await collectGarbage(local, { olderThan: '0s' });
    await expect(local.store.getSession(done.session.id)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    expect((await local.store.getSession(parked.session.id)).status).toBe('interrupted');
  });
  it('refuses to ask, resume or fork a LangGraph thread, with what to do instead, changing nothing (issue 45)', async () => {
    const thread = await database.store.createSession({
      ownerId: local.store.ownerId,
      title: 'LangGraph thread t-1',
      question: 'LangGraph thread t-1',
      workflow: { name: 'langgraph', version: 1 },
      status: 'interrupted',
    });
    for (const attempt of [
      () => askSession(local, { sessionId: thread.id, text: 'And then?' }),
      () => planResume(local, { sessionId: thread.id }),
      () => forkSession(local, { sessionId: thread.id }),
    ])
      await expect(attempt()).rejects.toThrow(/is a LangGraph thread: its graph runs it/);
    const after = await database.store.getSession(thread.id);
    expect(after.status).toBe('interrupted');
    expect(after.currentRunId).toBe(thread.currentRunId);
    expect((await database.store.listSessions({ limit: 10 })).sessions).toHaveLength(1);
  });
});
