import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { within } from '../../test/support/bounds.ts';
import { childEnv } from '../../test/support/child-env.ts';
import { minimalPdf } from '../../test/support/minimal-pdf.ts';
import { testConfig } from '../../test/support/test-config.ts';
import { Runner } from '../engine/runner.ts';
import { localServiceContext } from '../service/local-context.ts';
import { createWorkflowRegistry } from '../service/research-runtime.ts';
import { exportSession } from '../service/session-export.ts';
import { askSession, startResearch } from '../service/start-research.ts';
import { eventually, type TestDatabase } from '../store/conformance/harness.ts';
import { sqliteHarness } from '../store/sqlite/sqlite-harness.ts';
import { isApproval } from './outline-review.ts';
import type { ResearchOutput } from './research-types.ts';

const fixtures = fileURLToPath(new URL('../../test/fixtures/corpus/', import.meta.url));
const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const QUESTION = 'How does tidal power generate electricity, and where are tidal stations?';

describe('research workflow', () => {
  let database: TestDatabase;
  let folder: string;
  let env: Record<string, string>;
  const context = () => localServiceContext(database.store, testConfig(env));
  const runner = () =>
    new Runner({
      store: database.store,
      workflows: createWorkflowRegistry(database.store, testConfig(env)),
      log: () => undefined,
    });

  beforeEach(async () => {
    database = await sqliteHarness.create();
    folder = mkdtempSync(join(tmpdir(), 'quarry-research-'));
    cpSync(fixtures, folder, { recursive: true });
    writeFileSync(
      join(folder, 'reports', 'reactors.pdf'),
      minimalPdf('Molten salt reactors', [
        'Molten salt reactors dissolve their fuel in a fluoride salt that also cools the core.',
      ]),
    );
    env = {};
  });
  afterEach(async () => {
    await database.destroy();
    rmSync(folder, { recursive: true, force: true });
  });

  async function researchToEnd(question: string, settings: Record<string, unknown> = {}) {
    const { session } = await startResearch(context(), { question, docs: [folder], settings });
    const result = await runner().runSession(session.id);
    expect(result.status, JSON.stringify(result.error)).toBe('completed');
    return { session: await database.store.getSession(session.id), output: result.output as ResearchOutput };
  }

  it('writes a cited report with the extractive analyst: every [n] is a real source and passage', async () => {
    const { session, output } = await researchToEnd(QUESTION);
    const report = output.report!;
    expect(report).toMatch(/^# /);
    expect(report).toContain('Made without a language model');
    expect(report).toContain('## Sources');
    expect(report).toContain('La Rance');
    const cited = new Set([...report.matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1])));
    expect(cited.size).toBeGreaterThan(0);
    expect([...cited].sort((a, b) => a - b)).toEqual(output.citations.map((source) => source.number));
    const sources = await database.store.listSources(session.id);
    for (const citation of output.citations) {
      const source = sources.find((each) => each.url === citation.url);
      expect(source?.citation, citation.url).toBe(citation.number);
      // Each note of a cited source points at the exact passage in the document.
      const document = readFileSync(fileURLToPath(citation.url), 'utf8');
      for (const note of output.notes.filter((each) => each.url === citation.url && each.start !== undefined)) {
        expect(document.replace(/\r\n/g, '\n')).toContain(note.text.split(' ').slice(0, 4).join(' '));
      }
    }
    expect(output.flagged).toEqual([]);
    const messages = await database.store.listMessages(session.id);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(messages[1]!.content).toBe(report);
    expect(session.title).toBe('How does tidal power generate electricity, and where are tidal stations');
  });

  it('is deterministic: the same question over the same corpus gives byte-identical reports', async () => {
    const first = await researchToEnd(QUESTION);
    const second = await researchToEnd(QUESTION);
    expect(second.output.report).toBe(first.output.report);
  });

  it('refuses a run with no sources, and a bad setting, storing nothing', async () => {
    await expect(startResearch(context(), { question: QUESTION })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('--docs'),
    });
    await expect(
      startResearch(context(), { question: QUESTION, docs: [folder], settings: { maxIterations: 0 } }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'settings.maxIterations' } });
    await expect(startResearch(context(), { question: QUESTION, docs: [join(folder, 'nope')] })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    await expect(startResearch(context(), { question: '  ', docs: [folder] })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'question' },
    });
    expect((await database.store.listSessions()).sessions).toEqual([]);
  });

  it('waits for outline review, revises on feedback, and continues on an exact approval word', async () => {
    expect(['approve', ' OK ', 'Yes', 'lgtm', 'continue', ''].every(isApproval)).toBe(true);
    expect(['ok but add costs', 'approved?', 'yes please', 'not ok'].some(isApproval)).toBe(false);
    const { session } = await startResearch(context(), {
      question: QUESTION,
      docs: [folder],
      settings: { reviewOutline: true },
    });
    expect((await runner().runSession(session.id)).status).toBe('waiting');
    const feedback = await askSession(context(), { sessionId: session.id, text: 'ok but focus on barrage' });
    expect(feedback).toMatchObject({ kind: 'answer', accepted: true, requestKey: 'outline-review-1' });
    expect((await runner().runSession(session.id)).status).toBe('waiting');
    const events = await database.store.readEvents(session.id);
    const requests = events
      .filter((event) => event.type === 'input-request')
      .map((event) => (event.data as { key: string }).key);
    expect(requests).toEqual(['outline-review-1', 'outline-review-2']);
    const revised = (
      events.filter((event) => event.type === 'input-request').at(-1)!.data as {
        payload: { outline: { sections: { title: string }[] } };
      }
    ).payload.outline;
    expect(revised.sections.map((section) => section.title)).toContain('Barrage');
    await askSession(context(), { sessionId: session.id, text: ' LGTM ' });
    const done = await runner().runSession(session.id);
    expect(done.status).toBe('completed');
    expect((done.output as ResearchOutput).report).toContain('## Barrage');
  });

  it('answers a follow-up from stored notes, and researches further when they fall short', async () => {
    const { session, output } = await researchToEnd(QUESTION);
    const asked = await askSession(context(), { sessionId: session.id, text: 'Where is the La Rance tidal station?' });
    expect(asked.kind).toBe('follow-up');
    const answered = await runner().runSession(session.id);
    const answer = answered.output as ResearchOutput;
    expect(answer.answer).toContain('La Rance');
    expect(answer.report).toBeUndefined();
    // The answer cites by the report's own numbers, and lists what it cites under them.
    expect(answer.citations.length).toBeGreaterThan(0);
    for (const source of answer.citations) {
      const inReport = output.citations.find((each) => each.url === source.url);
      if (inReport) expect(source.number).toBe(inReport.number);
      expect(answer.answer).toContain(`[${source.number}]`);
    }
    expect(answer.claims!.every((claim) => claim.verdict === 'supported')).toBe(true);
    await askSession(context(), {
      sessionId: session.id,
      text: 'How do honeybees communicate the distance to flowers with the waggle dance?',
    });
    const researched = (await runner().runSession(session.id)).output as ResearchOutput;
    expect(researched.report).toContain('waggle');
    expect(researched.report).not.toBe(output.report);
    // Offline, the conversation gets the few sentences that answer the follow-up, cited, not the
    // report again (issue 31); the report is the new version.
    expect(researched.answer).toContain('waggle');
    expect(researched.answer).toMatch(/\[\d+\]/);
    expect(researched.answer).toContain('report version 2');
    expect(researched.answer!.length).toBeLessThan(researched.report!.length);
    const runs = await database.store.listRuns(session.id);
    expect(runs.map((run) => [run.kind, run.status])).toEqual([
      ['initial', 'completed'],
      ['follow-up', 'completed'],
      ['follow-up', 'completed'],
    ]);
    expect((runs[0]!.output as ResearchOutput).report).toBe(output.report);
    const messages = await database.store.listMessages(session.id);
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    // Markdown exports carry the conversation under the latest report.
    const exported = (await exportSession(context(), { sessionId: session.id, format: 'md' })).body as string;
    expect(exported.startsWith(researched.report!.trimEnd())).toBe(true);
    expect(exported).toContain('## Conversation');
    expect(exported).toContain('### Where is the La Rance tidal station?');
    expect(exported).toContain(answer.answer!);
    expect(exported).toContain(researched.answer!);
  });

  it('cites first the best page of its first search, never demoting it for another page (issue 31)', async () => {
    // The page the search ranks first answers; the overview used to answer from whichever page had
    // the best-scoring single sentence, whatever the search said.
    writeFileSync(
      join(folder, 'ocean-cycles.md'),
      [
        '# Ocean cycles',
        'Spring tides form when the Sun, the Moon and the Earth line up, so that the pulls of the Sun and of the Moon on the oceans add together.',
        'Spring tides form twice a month, at new moon and at full moon, and spring tides are the highest tides of the month.',
        'Neap tides form at the quarter moons, when the two pulls partly cancel and the tides are lowest.',
      ].join('\n\n'),
    );
    // One short, focused sentence on a page the search ranks lower: its note scores best.
    writeFileSync(
      join(folder, 'almanac.md'),
      [
        '# Harbour almanac',
        'Spring tides form at new and full moon.',
        'The almanac lists the opening hours of the harbour office, the ferry times and the fish market days for the whole year.',
      ].join('\n\n'),
    );
    for (const question of ['How do spring tides form?', QUESTION, 'What lake fills the caldera of Mount Mazama?']) {
      const { session, output } = await researchToEnd(question);
      const steps = await database.store.listSteps(session.id);
      const firstSearch = steps.filter((step) => /search-\d+$/.test(step.key)).sort((a, b) => a.seq - b.seq)[0]!;
      const ranked = (firstSearch.output as { results: { url: string }[] }).results.map((result) => result.url);
      const cited = output.citations.map((source) => source.url);
      // The first cited page is the best-ranked page of the first search that the report quotes.
      expect(cited[0], question).toBe(ranked.find((url) => cited.includes(url)));
      if (question.startsWith('How do spring')) expect(cited[0]).toContain('ocean-cycles.md');
    }
  });

  it('ends with the same report after SIGKILL of the worker mid-research and a resume', async () => {
    const reference = await researchToEnd(QUESTION);
    const { session } = await startResearch(context(), { question: QUESTION, docs: [folder] });
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/research/testing/research-child.ts'], {
      cwd: projectRoot,
      env: {
        ...childEnv(),
        QUARRY_DB: database.location,
        SESSION_ID: session.id,
        // Short, so the killed worker's lease is soon over; long enough for a loaded machine to keep.
        LEASE_TTL_MS: String(within(500)),
        STEP_PAUSE_MS: '100',
      },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    await eventually(
      async () =>
        (await database.store.readEvents(session.id)).filter((event) => event.type === 'step-end').length >= 6,
      20_000,
    );
    child.kill('SIGKILL');
    await exited;
    const before = await database.store.loadJournal(session.currentRunId!);
    expect(before.some((step) => step.status === 'completed')).toBe(true);
    await eventually(async () => (await database.store.getSession(session.id)).status === 'interrupted', 1_500);
    const resumed = await runner().runSession(session.id);
    expect(resumed.status).toBe('completed');
    expect((resumed.output as ResearchOutput).report).toBe(reference.output.report);
    const after = await database.store.loadJournal(session.currentRunId!);
    for (const step of before.filter((each) => each.status === 'completed')) {
      expect(after.find((each) => each.key === step.key)?.attempts, step.key).toBe(step.attempts);
    }
  });
});
