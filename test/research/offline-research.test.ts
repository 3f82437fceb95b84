import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalCorpusSearch } from '../../src/providers/search/local-corpus/local-corpus-search.ts';
import type { ResearchOutput } from '../../src/research/research-types.ts';
import { localServiceContext } from '../../src/service/local-context.ts';
import { askSession, startResearch } from '../../src/service/start-research.ts';
import type { StoreHarness, TestDatabase } from '../../src/store/conformance/harness.ts';
import { postgresHarness, postgresSkipReason } from '../../src/store/postgres/postgres-harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { testConfig } from '../support/test-config.ts';

const handbook = fileURLToPath(new URL('../fixtures/handbook/', import.meta.url));

/** Questions over the handbook fixture, each with the page that answers it and a phrase of the answer. */
const labeled = [
  { question: 'What is a caldera?', page: 'glossary.html', phrase: 'A large basin left where the ground collapsed' },
  {
    question: 'How does a tidal barrage generate electricity?',
    page: 'guides/tides.html',
    phrase: 'holding water behind a dam at high tide and releasing it through turbines',
  },
  { question: 'When did the La Rance station open?', page: 'guides/tides.html', phrase: 'opened in 1966' },
  {
    question: 'What is the difference between a crater and a caldera?',
    page: 'guides/volcanoes.md',
    phrase: 'a caldera is made by collapse',
  },
];

function describeOffline(harness: StoreHarness, skipReason: string | null) {
  describe.skipIf(skipReason !== null)(
    `offline research on ${harness.name}${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    () => {
      let database: TestDatabase;
      let folder: string;
      const context = () => localServiceContext(database.store, testConfig());
      const url = (page: string) => pathToFileURL(join(folder, page)).href;

      beforeEach(async () => {
        database = await harness.create();
        folder = mkdtempSync(join(tmpdir(), 'quarry-handbook-'));
        cpSync(handbook, folder, { recursive: true });
      });
      afterEach(async () => {
        await database.destroy();
        rmSync(folder, { recursive: true, force: true });
      });

      async function research(question: string, settings: Record<string, unknown> = {}) {
        const { session } = await startResearch(context(), { question, docs: [folder], settings });
        const result = await context().runner.runSession(session.id);
        expect(result.status, JSON.stringify(result.error)).toBe('completed');
        return { session, output: result.output as ResearchOutput };
      }

      it('answers each labeled question: the phrase in the report, the answering page cited first, no navigation page', async () => {
        for (const { question, page, phrase } of labeled) {
          const { output } = await research(question);
          expect(output.report, question).toContain(phrase);
          expect(output.citations[0]?.url, question).toBe(url(page));
          expect(
            output.citations.map((source) => source.url),
            question,
          ).not.toContain(url('index.html'));
          // Every quoted sentence is the source's own words, and never cut inside a link.
          expect(output.report).not.toMatch(/\]\(|\.html#/);
        }
      });

      it('ranks a navigation page below prose even when it names every term of the query', async () => {
        await context().indexer.ensure([folder]);
        const search = new LocalCorpusSearch(database.store, [folder]);
        const results = await search.search('barrage caldera estuary tidal stream', { maxResults: 4 });
        expect(results[0]!.url).not.toBe(url('index.html'));
        const navigation = results.find((result) => result.url === url('index.html'));
        if (navigation) expect(navigation.metadata).toMatchObject({ navigation: true });
        const [caldera] = await search.search('caldera', { maxResults: 1 });
        expect(caldera!.url).toBe(url('glossary.html'));
      });

      it('opens a definition question with the definition', async () => {
        const { output } = await research('What is an estuary?');
        const overview = output.report!.split('## Overview')[1]!.trim();
        expect(overview.startsWith('The wide mouth of a river, where fresh water meets the tide [1].')).toBe(true);
        expect(output.report).not.toContain('Other findings');
      });

      it('applies outline feedback it understands and says what it did not', async () => {
        const { session } = await startResearch(context(), {
          question: 'What kinds of tidal power stations are there?',
          docs: [folder],
          settings: { reviewOutline: true },
        });
        expect((await context().runner.runSession(session.id)).status).toBe('waiting');
        await askSession(context(), {
          sessionId: session.id,
          text: 'drop tidal stream turbines; add La Rance; make it sing',
        });
        expect((await context().runner.runSession(session.id)).status).toBe('waiting');
        const request = (await database.store.readEvents(session.id)).findLast(
          (event) => event.type === 'input-request',
        );
        const payload = (request?.type === 'input-request' ? request.data.payload : null) as {
          outline: { sections: { title: string }[] };
          reply: string;
        };
        const titles = payload.outline.sections.map((section) => section.title);
        expect(titles).toContain('La Rance');
        expect(titles.some((title) => title.includes('Tidal stream'))).toBe(false);
        expect(payload.reply).toMatch(/^Done: dropped "2\.2\. Tidal stream turbines"; added a section "La Rance"\./);
        expect(payload.reply).toContain('"make it sing": not understood');
        await askSession(context(), { sessionId: session.id, text: 'approve' });
        const done = await context().runner.runSession(session.id);
        expect((done.output as ResearchOutput).report).toContain('## La Rance');
        expect((done.output as ResearchOutput).report).not.toContain('## 2.2. Tidal stream turbines');
      });
    },
  );
}

describeOffline(sqliteHarness, null);
describeOffline(postgresHarness, postgresSkipReason());
