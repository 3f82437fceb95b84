import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalCorpusSearch } from '../../src/providers/search/local-corpus/local-corpus-search.ts';
import { listedSources, unquotedText } from '../../src/research/quoted-report.ts';
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

      /** What a report says that is not word for word in the document it cites (issue 42: must be nothing). */
      async function unquoted(report: string): Promise<string[]> {
        const texts = new Map<string, string>();
        for (const document of await database.store.listDocuments()) {
          const passages = await database.store.readPassages({
            path: document.path,
            positions: Array.from({ length: 100 }, (_, index) => index),
          });
          texts.set(document.path, passages.map((passage) => passage.text).join('\n\n'));
        }
        const listed = listedSources(report);
        return unquotedText(report, (number) => texts.get(listed.get(number) ?? ''));
      }

      it('answers each labeled question: the phrase in its answer, the answering page cited first, every passage word for word', async () => {
        for (const { question, page, phrase } of labeled) {
          const { output } = await research(question);
          const answer = output.report!.split(/^## /m)[1] ?? '';
          expect(answer, question).toContain(phrase);
          expect(output.citations[0]?.url, question).toBe(url(page));
          expect(
            output.citations.map((source) => source.url),
            question,
          ).not.toContain(url('index.html'));
          expect(await unquoted(output.report!), question).toEqual([]);
          // Quoted, not verified: no claim of the report is checked by word overlap with its own source.
          expect(output.claims, question).toEqual([]);
          expect(output.report).toContain('quoted word for word');
          expect(output.report).not.toMatch(/verified|supports it/i);
        }
      });

      it('searches a long question with pasted code and answers it from the documents (issue 42)', async () => {
        const code = Array.from(
          { length: 40 },
          (_, index) => `    barrage_${index % 4} = turbine(tide, ${index}) + estuary_${index}`,
        ).join('\n');
        const question = `My model of a tidal barrage gives nonsense. How does a tidal barrage generate electricity? Here is my code:\n${code}`;
        expect(question.length).toBeGreaterThan(1500);
        const { session, output } = await research(question);
        const searches = (await database.store.listSteps(session.id)).filter((step) => /\/search-\d+$/.test(step.key));
        expect(searches.length).toBeGreaterThan(0);
        expect(output.citations[0]?.url).toBe(url('guides/tides.html'));
        expect(await unquoted(output.report!)).toEqual([]);
      });

      it('says what it searched when nothing answers', async () => {
        const { output } = await research('How do I configure a Kubernetes ingress?');
        expect(output.citations).toEqual([]);
        expect(output.report).toMatch(/hold nothing that answers this question\. Searched for: “[^”]+”/);
        // No footer about quoted passages under a report that quotes none.
        expect(output.report).not.toContain('quoted word for word');
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

      it('opens a definition question with the definition, quoted whole under its entry', async () => {
        const { output } = await research('What is an estuary?');
        const answer = output.report!.split(/^## /m)[1]!;
        expect(answer.startsWith('estuary — Glossary')).toBe(true);
        expect(answer).toContain(
          '> The wide mouth of a river, where fresh water meets the tide.\n\n— Glossary › estuary [1]',
        );
      });

      it('applies outline feedback it understands and says what it did not', async () => {
        const { session } = await startResearch(context(), {
          question: 'What kinds of tidal power stations are there?',
          docs: [folder],
          settings: { reviewOutline: true, reportLength: 'long' },
        });
        expect((await context().runner.runSession(session.id)).status).toBe('waiting');
        const review = async () => {
          const request = (await database.store.readEvents(session.id)).findLast(
            (event) => event.type === 'input-request',
          );
          return (request?.type === 'input-request' ? request.data.payload : null) as {
            outline: { sections: { title: string }[] };
            reply: string;
          };
        };
        const dropped = (await review()).outline.sections.at(-1)!.title;
        await askSession(context(), { sessionId: session.id, text: `drop ${dropped}; add La Rance; make it sing` });
        expect((await context().runner.runSession(session.id)).status).toBe('waiting');
        const payload = await review();
        const titles = payload.outline.sections.map((section) => section.title);
        expect(titles).toContain('La Rance');
        expect(titles).not.toContain(dropped);
        expect(payload.reply).toContain(`dropped "${dropped}"; added a section "La Rance".`);
        expect(payload.reply).toContain('"make it sing": not understood');
        await askSession(context(), { sessionId: session.id, text: 'approve' });
        const done = await context().runner.runSession(session.id);
        const report = (done.output as ResearchOutput).report!;
        expect(report).toContain('## La Rance');
        expect(report.split('\n')).not.toContain(`## ${dropped}`);
        expect(await unquoted(report)).toEqual([]);
      });
    },
  );
}

describeOffline(sqliteHarness, null);
describeOffline(postgresHarness, postgresSkipReason());
