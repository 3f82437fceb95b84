import { cpSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { minimalPdf, pagedPdf } from '../../../../test/support/minimal-pdf.ts';
import { QuarryError } from '../../../shared/errors.ts';
import type { StoreHarness, TestDatabase } from '../../../store/conformance/harness.ts';
import { postgresHarness, postgresSkipReason } from '../../../store/postgres/postgres-harness.ts';
import { sqliteHarness } from '../../../store/sqlite/sqlite-harness.ts';
import { extractHtml } from '../../extract/extract-html.ts';
import { chunkText, isNavigationText } from './chunk-text.ts';
import { indexFolders } from './index-folders.ts';
import { endsAnnouncing, LocalCorpusSearch, withAnnouncedNext } from './local-corpus-search.ts';

const fixtures = new URL('../../../../test/fixtures/corpus/', import.meta.url).pathname;

/** Questions and the file whose passage answers them. */
const labeled: [string, string][] = [
  ['How efficient are commercial photovoltaic panels?', 'energy/solar-power.md'],
  ['When did the La Rance tidal barrage open?', 'energy/tidal-energy.txt'],
  ['How do bees tell each other the distance to flowers?', 'nature/honeybees.html'],
  ['What lake fills the caldera of Mount Mazama?', 'nature/volcanoes.md'],
  ['Which reactor design cools with molten salt?', 'reports/reactors.pdf'],
  ['How much did solar module prices fall?', 'energy/solar-power.md'],
];

function describeCorpus(harness: StoreHarness, skipReason: string | null) {
  describe.skipIf(skipReason !== null)(
    `local corpus on ${harness.name}${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    () => {
      let database: TestDatabase;
      let folder: string;
      beforeEach(async () => {
        database = await harness.create();
        folder = mkdtempSync(join(tmpdir(), 'quarry-corpus-'));
        cpSync(fixtures, folder, { recursive: true });
        writeFileSync(
          join(folder, 'reports', 'reactors.pdf'),
          minimalPdf('Molten salt reactors', [
            'Molten salt reactors dissolve their fuel in a fluoride salt that also cools the core.',
            'The salt runs at atmospheric pressure and high temperature.',
          ]),
          { flag: 'w' },
        );
      });
      afterEach(async () => {
        await database.destroy();
        rmSync(folder, { recursive: true, force: true });
      });

      it('reads a result in its place: the page opening and the start of the section the match is in', async () => {
        const filler = (topic: string) =>
          Array.from({ length: 6 }, (_, index) => `Paragraph ${index} about ${topic} and nothing in particular.`).join(
            '\n\n',
          );
        writeFileSync(
          join(folder, 'manual.md'),
          `# The manual\n\nThis manual explains the whole machine.\n\n## Gears\n\n${filler('gears')}\n\n## Bearings\n\nA bearing lets a shaft turn with little friction.\n\n${filler('shafts')}\n\nGrease the flanged bearing every spring.\n`,
        );
        await indexFolders(database.store, [folder]);
        const search = new LocalCorpusSearch(database.store, [folder]);
        const [hit] = await search.search('grease flanged bearing', { maxResults: 1 });
        expect(hit!.url).toContain('manual.md');
        expect(hit).not.toHaveProperty('content');
        const { text, segments } = await search.read(hit!);
        expect(text).toContain('Grease the flanged bearing every spring.');
        expect(text).toContain('A bearing lets a shaft turn with little friction.');
        expect(text).toContain('This manual explains the whole machine.');
        expect(segments!.every((segment, index) => index === 0 || segment.at > segments![index - 1]!.at)).toBe(true);
      });

      it('reads what a lead-in announces with it, even past the read budget (issue 42)', async () => {
        // Passages of about 860 characters: the hit, the page opening, the section's start, the passage
        // after the hit, then the next but one, which ends on a lead-in, fill most of the budget.
        const filler = (topic: string, length = 17) =>
          Array.from({ length }, (_, index) => `Sentence ${index} on ${topic} says little of use here.`).join(' ');
        const steps = Array.from({ length: 24 }, (_, index) => `SELECT rebuild_step(${index}, 'distributors');`);
        writeFileSync(
          join(folder, 'indexes.md'),
          [
            '# Index maintenance',
            filler('openings'),
            '## Rebuilding',
            filler('sections'),
            `Rebuild a flanged index when it bloats. ${filler('bloat')}`,
            filler('planning'),
            `${filler('locks', 15)} To rebuild the flanged index without blocking writes:`,
            `\`\`\`\n${steps.join('\n')}\n\`\`\``,
            filler('statistics'),
          ].join('\n\n'),
        );
        await indexFolders(database.store, [folder]);
        const search = new LocalCorpusSearch(database.store, [folder]);
        const [hit] = await search.search('rebuild flanged index bloats', { maxResults: 1 });
        expect(hit!.url).toContain('indexes.md');
        const { text } = await search.read(hit!);
        expect(text).toContain('To rebuild the flanged index without blocking writes:');
        expect(text).toContain(`${steps.at(-1)}\n\`\`\``);
      });

      it('searches a page once: its source mirror and an aggregate of all pages are found at indexing and left out (issue 31)', async () => {
        const manual = mkdtempSync(join(tmpdir(), 'quarry-mirrors-'));
        try {
          // Pages of different words, as a manual's pages are.
          const words = (seed: number) =>
            Array.from({ length: 400 }, (_, index) => `w${(index * 7919 + seed * 104729) % 100003}`);
          const sentences = (topic: string) => {
            const vocabulary = words(topic.length * 31 + topic.charCodeAt(0));
            return Array.from(
              { length: 12 },
              (_, line) => `The ${topic} ${vocabulary.slice(line * 30, line * 30 + 30).join(' ')} ends here.`,
            );
          };
          const html = (title: string, lines: string[]) =>
            `<html><head><title>${title}</title></head><body><main><h1>${title}</h1>${lines.map((line) => `<p>${line}</p>`).join('')}</main></body></html>`;
          writeFileSync(join(manual, 'checkpoints.html'), html('Checkpoints', sentences('checkpoint')));
          // The page's source, in its own markup, shipped beside it.
          writeFileSync(
            join(manual, 'checkpoints.txt'),
            `Checkpoints\n===========\n\n${sentences('checkpoint')
              .map((line) => `*${line}*`)
              .join('\n\n')}\n`,
          );
          const others = ['lease', 'journal', 'runner', 'worker', 'event', 'source', 'session', 'blob', 'inbox'];
          for (const topic of others)
            writeFileSync(join(manual, `${topic}s.html`), html(`${topic}s`, sentences(topic)));
          // Every page in one.
          writeFileSync(
            join(manual, 'all.html'),
            html('All pages', [
              ...['checkpoint', ...others].flatMap((topic) => sentences(topic)),
              'The end of everything.',
            ]),
          );
          await indexFolders(database.store, [manual]);
          const duplicates = Object.fromEntries(
            (await database.store.listDocuments()).map((document) => [
              document.path.slice(manual.length + 1),
              document.duplicateOf?.startsWith(manual)
                ? document.duplicateOf.slice(manual.length + 1)
                : document.duplicateOf,
            ]),
          );
          expect(duplicates).toMatchObject({
            'all.html': '*',
            'checkpoints.html': null,
            'checkpoints.txt': 'checkpoints.html',
            'leases.html': null,
          });
          expect(Object.values(duplicates).filter((value) => value !== null)).toHaveLength(2);
          const search = new LocalCorpusSearch(database.store, [manual]);
          const found = await search.search('checkpoint ends', { maxResults: 20 });
          // "ends" is on every page: each page once, no mirror, no aggregate.
          const pages = found.map((result) => result.url.split('/').at(-1));
          expect(pages).toHaveLength(10);
          expect(pages).not.toContain('all.html');
          expect(pages).not.toContain('checkpoints.txt');
        } finally {
          rmSync(manual, { recursive: true, force: true });
        }
      });

      it('indexes a manual once when its PDF lies beside its pages, without the PDF’s running headers (issue 42)', async () => {
        const manual = mkdtempSync(join(tmpdir(), 'quarry-pdf-twin-'));
        try {
          const words = (seed: number) =>
            Array.from({ length: 400 }, (_, index) => `w${(index * 7919 + seed * 104729) % 100003}`);
          const topics = ['lease', 'journal', 'runner', 'worker', 'event', 'source', 'session', 'blob', 'inbox'];
          // Lines short enough for a printed page's width.
          const lines = (topic: string, seed: number) =>
            Array.from(
              { length: 36 },
              (_, line) =>
                `The ${topic} ${words(seed)
                  .slice(line * 10, line * 10 + 10)
                  .join(' ')} ends.`,
            );
          for (const [seed, topic] of topics.entries())
            writeFileSync(
              join(manual, `${topic}.html`),
              `<html><head><title>${topic}</title></head><body><main><h1>${topic}</h1>${lines(topic, seed)
                .map((line) => `<p>${line}</p>`)
                .join('')}</main></body></html>`,
            );
          // The same manual printed: two pages per page, each under a running header and over a footer.
          const printed = topics.flatMap((topic, seed) => [
            lines(topic, seed).slice(0, 6),
            lines(topic, seed).slice(6),
          ]);
          writeFileSync(
            join(manual, 'manual.pdf'),
            pagedPdf(
              'The manual',
              printed.map((page, index) => ['Quarry Reference Manual', ...page, `${index + 1} / ${printed.length}`]),
            ),
          );
          const { extractPdf } = await import('../../extract/extract-pdf.ts');
          const { readFileSync } = await import('node:fs');
          const text = (await extractPdf(readFileSync(join(manual, 'manual.pdf')), 'manual')).text;
          expect(text).toContain('The lease');
          expect(text).not.toContain('Quarry Reference Manual');
          expect(text).not.toMatch(/^\d+ \/ \d+$/m);
          await indexFolders(database.store, [manual]);
          const pdf = (await database.store.listDocuments()).find((document) => document.path.endsWith('manual.pdf'));
          expect(pdf?.duplicateOf).toBe('*');
          const found = await new LocalCorpusSearch(database.store, [manual]).search('journal ends', {
            maxResults: 20,
          });
          expect(found.map((result) => result.url.split('/').at(-1))).not.toContain('manual.pdf');
          expect(found.map((result) => result.url.split('/').at(-1))).toContain('journal.html');
        } finally {
          rmSync(manual, { recursive: true, force: true });
        }
      });

      it('keeps a redirect page (Texinfo’s “The node you are looking for is at…”) as navigation (issue 42)', async () => {
        writeFileSync(
          join(folder, 'Phony-Targets-redirect.html'),
          '<!DOCTYPE html><html><head><title>Phony Targets (GNU make)</title><meta http-equiv="Refresh" content="0; url=Phony-Targets.html#Phony-Targets"></head><body><p>The node you are looking for is at <a href="Phony-Targets.html#Phony-Targets">Phony Targets</a>.</p></body></html>',
        );
        writeFileSync(
          join(folder, 'moved.html'),
          '<!DOCTYPE html><html><head><title>Moved</title></head><body><p>The node you are looking for is at <a href="x.html">Phony targets in make</a>.</p></body></html>',
        );
        await indexFolders(database.store, [folder]);
        const documents = await database.store.listDocuments();
        for (const name of ['Phony-Targets-redirect.html', 'moved.html'])
          expect(documents.find((document) => document.path.endsWith(name))?.navigation, name).toBe(true);
      });

      it('indexes every supported type and skips bad files with a reason', async () => {
        writeFileSync(join(folder, 'binary.txt'), Buffer.from([0x68, 0x69, 0x00, 0x01, 0x02]));
        writeFileSync(join(folder, 'broken.pdf'), '%PDF-1.4 this is not really a pdf');
        writeFileSync(join(folder, 'latin1.md'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
        writeFileSync(join(folder, 'huge.md'), 'x'.repeat(5000));
        writeFileSync(join(folder, 'image.png'), Buffer.from([0x89, 0x50]));
        // A chapter page of a manual that is only its table of contents and navigation.
        writeFileSync(
          join(folder, 'chapter.html'),
          '<html><head><title>Chapter 7. Setup</title></head><body><div class="chapter"><h2>Chapter 7. Setup</h2><div class="toc"><dl><dt><a href="c.html">7.1. Introduction</a></dt><dt><a href="d.html">7.2. Install</a></dt></dl></div></div></body></html>',
        );
        const progress: number[] = [];
        const report = await indexFolders(database.store, [folder], {
          maxFileBytes: 4000,
          onProgress: ({ done }) => progress.push(done),
        });
        expect(report.added).toBe(5);
        expect(report.skipped.map((skip) => skip.path.slice(folder.length + 1)).sort()).toEqual([
          'binary.txt',
          'broken.pdf',
          'chapter.html',
          'huge.md',
          'latin1.md',
        ]);
        expect(report.skipped.find((skip) => skip.path.endsWith('huge.md'))!.reason).toContain('too large');
        expect(report.skipped.find((skip) => skip.path.endsWith('chapter.html'))!.reason).toContain('no prose');
        expect(progress.at(-1)).toBe(10);
        const documents = await database.store.listDocuments();
        const titles = Object.fromEntries(
          documents
            .filter((document) => document.error === null)
            .map((document) => [document.path.slice(folder.length + 1), document.title]),
        );
        // Files that could not be indexed are recorded with their reason (issue 31), so an unchanged
        // one is not read again: the next run finds everything unchanged (the one too large is never read).
        expect(
          documents
            .filter((document) => document.error !== null)
            .map((document) => document.path.slice(folder.length + 1))
            .sort(),
        ).toEqual(['binary.txt', 'broken.pdf', 'chapter.html', 'latin1.md']);
        const again = await indexFolders(database.store, [folder], { maxFileBytes: 4000 });
        expect(again).toMatchObject({ added: 0, updated: 0, unchanged: 9, removed: 0 });
        expect(again.skipped.map((skip) => skip.path.slice(folder.length + 1))).toEqual(['huge.md']);
        expect(titles).toEqual({
          'energy/solar-power.md': 'Solar power',
          'energy/tidal-energy.txt': 'Tidal energy',
          'nature/honeybees.html': 'Honeybees and the waggle dance',
          'nature/volcanoes.md': 'How calderas form',
          'reports/reactors.pdf': 'Molten salt reactors',
        });
        const search = new LocalCorpusSearch(database.store, [folder]);
        const [bees] = await search.search('waggle dance distance', { maxResults: 1 });
        const { text } = await search.read(bees!);
        expect(text).toContain('waggle');
        expect(text).not.toContain('tracking');
        expect(text).not.toContain('Copyright');
      });

      it('stops at a store failure (a full disk) instead of reporting every file skipped', async () => {
        // The SQLite driver's own answer to SQLITE_FULL, from the third document on.
        let writes = 0;
        const full = new Proxy(database.store, {
          get(target, name, receiver) {
            if (name !== 'upsertDocument') return Reflect.get(target, name, receiver);
            return (input: Parameters<typeof target.upsertDocument>[0]) => {
              if (++writes > 2)
                return Promise.reject(
                  new QuarryError('STORE_UNAVAILABLE', 'Cannot write the SQLite database: database or disk is full'),
                );
              return target.upsertDocument(input);
            };
          },
        });
        await expect(indexFolders(full, [folder])).rejects.toMatchObject({
          code: 'STORE_UNAVAILABLE',
          message: expect.stringContaining('disk is full'),
        });
        expect(writes).toBe(3);
      });

      it('ranks the passage that answers each labeled question first', async () => {
        await indexFolders(database.store, [folder]);
        const search = new LocalCorpusSearch(database.store, [folder]);
        for (const [question, expected] of labeled) {
          const [best] = await search.search(question, { maxResults: 5 });
          expect(best?.url, question).toBe(`file://${join(folder, expected)}`);
          expect(best!.metadata).toMatchObject({
            passageId: expect.any(Number),
            start: expect.any(Number),
            end: expect.any(Number),
          });
        }
      });

      it('re-indexes incrementally: unchanged skipped, changed updated, deleted removed', async () => {
        await indexFolders(database.store, [folder]);
        const again = await indexFolders(database.store, [folder]);
        expect(again).toMatchObject({ added: 0, updated: 0, unchanged: 5, removed: 0 });
        const tidal = join(folder, 'energy', 'tidal-energy.txt');
        writeFileSync(
          tidal,
          'Tidal energy\n\nThe Sihwa Lake station in South Korea is the largest tidal plant, at 254 megawatts.',
        );
        utimesSync(tidal, new Date(), new Date(Date.now() + 5000));
        const volcano = join(folder, 'nature', 'volcanoes.md');
        utimesSync(volcano, new Date(), new Date(Date.now() + 5000)); // touched, same content
        unlinkSync(join(folder, 'nature', 'honeybees.html'));
        const third = await indexFolders(database.store, [folder]);
        expect(third).toMatchObject({ added: 0, updated: 1, unchanged: 3, removed: 1 });
        const search = new LocalCorpusSearch(database.store, [folder]);
        expect((await search.search('Sihwa', { maxResults: 3 }))[0]?.url).toBe(`file://${tidal}`);
        expect(await search.search('La Rance', { maxResults: 3 })).toEqual([]);
        expect(await search.search('waggle', { maxResults: 3 })).toEqual([]);
      });

      it('refuses a folder that does not exist, changing nothing', async () => {
        await expect(indexFolders(database.store, [join(folder, 'missing')])).rejects.toMatchObject({
          code: 'INVALID_INPUT',
        });
        expect(await database.store.listDocuments()).toEqual([]);
      });
    },
  );
}

describeCorpus(sqliteHarness, null);
describeCorpus(postgresHarness, postgresSkipReason());

describe('chunkText', () => {
  it('reads the passage after one that ends announcing it, right after it (issue 42)', () => {
    const texts = new Map([
      [4, 'The exit status is one when the code cannot be parsed.'],
      [7, 'If you need to exit before the entire input has been read, you can use `m4exit`:'],
      [8, '##### Builtin: m4exit (code)'],
    ]);
    expect(withAnnouncedNext([4, 0, 7, 2, 9], (at) => texts.get(at))).toEqual([4, 0, 7, 8, 2, 9]);
  });

  it('takes a line of code that ends on a colon for no lead-in: the index cuts long code blocks there (issue 42)', () => {
    expect(
      endsAnnouncing('The solution is easy: temporarily increment the reference count. The correct version reads:'),
    ).toBe(true);
    expect(endsAnnouncing('To recreate a primary key constraint, without blocking updates:\n')).toBe(true);
    // Python's itertools recipes, cut by the index inside their code block, with or without its fence.
    expect(
      endsAnnouncing('def take(n, iterable):\n    return list(islice(iterable, n))\n\ndef batched(iterable, n):'),
    ).toBe(false);
    expect(endsAnnouncing('```\nfor item in items:\n    if item:\n        count += 1\n    else:')).toBe(false);
    expect(endsAnnouncing('    except AttributeError:')).toBe(false);
    expect(endsAnnouncing('else:')).toBe(false);
    expect(endsAnnouncing('Note:')).toBe(true);
    expect(withAnnouncedNext([3], () => 'def batched(iterable, n):')).toEqual([3]);
  });

  it('keeps whole paragraphs within a section, with offsets, headings and link density', () => {
    const text = '# Guide\n\nFirst paragraph.\n\nSecond one,\nwith two lines.\n\n## Install\n\nRun the installer.';
    const passages = chunkText(text, {
      targetChars: 60,
      linkRanges: [[text.indexOf('installer'), text.indexOf('installer') + 9]],
    });
    expect(passages.map((passage) => [passage.headings, passage.text])).toEqual([
      ['Guide', '# Guide\n\nFirst paragraph.\n\nSecond one,\nwith two lines.'],
      ['Guide › Install', '## Install\n\nRun the installer.'],
    ]);
    for (const passage of passages) expect(text.slice(passage.start, passage.end)).toBe(passage.text);
    expect(passages[1]!.linkDensity).toBeCloseTo(9 / passages[1]!.text.length, 5);
  });

  it('gives each definition-list entry a passage of its own, and keeps a code block whole', () => {
    const text =
      '## Terms\n\n##### barrage\n\nA dam across an estuary.\n\n##### caldera\n\nA collapsed basin.\n\n```\nx = 1\n\ny = 2\n```';
    const passages = chunkText(text, { targetChars: 400 });
    expect(passages.map((passage) => passage.headings)).toEqual(['Terms › barrage', 'Terms › caldera']);
    expect(passages[1]!.text).toContain('x = 1\n\ny = 2');
  });

  it('files terms in a row with the one description they share, the first term kept (issue 42)', () => {
    const text =
      '## OPTIONS\n\n##### -f\n\n##### --force\n\nRemove the files.\n\n##### -n\n\n##### --dry-run\n\nShow what would be done.\n\n##### -q\n\n##### --quiet';
    const passages = chunkText(text, { targetChars: 400 });
    expect(passages.map((passage) => [passage.headings, passage.text])).toEqual([
      ['OPTIONS › -f, --force', '##### -f\n\n##### --force\n\nRemove the files.'],
      ['OPTIONS › -n, --dry-run', '##### -n\n\n##### --dry-run\n\nShow what would be done.'],
    ]);
    for (const passage of passages) expect(text.slice(passage.start, passage.end)).toBe(passage.text);
    // Terms on lines of their own without a blank line between them (a Markdown file): the same
    // entry, and its text is the document's.
    const tight = '## OPTIONS\n\n##### -n\n##### --dry-run\n\nShow what would be done.';
    const [entry] = chunkText(tight, { targetChars: 400 });
    expect(entry).toMatchObject({ headings: 'OPTIONS › -n, --dry-run', text: tight.slice(tight.indexOf('#####')) });
    // Sections are not terms: an empty section before the next one is left out, as before.
    const sections = chunkText('# Guide\n\n## Install\n\n## Usage\n\nRun it.', { targetChars: 400 });
    expect(sections.map((passage) => [passage.headings, passage.text])).toEqual([
      ['Guide › Usage', '## Usage\n\nRun it.'],
    ]);
  });

  it('cuts a paragraph longer than the maximum at sentence ends', () => {
    const sentence = 'This sentence is about forty characters. ';
    const passages = chunkText(sentence.repeat(100).trim(), { targetChars: 300, maxChars: 400 });
    expect(passages.length).toBeGreaterThan(8);
    for (const passage of passages) expect(passage.text.length).toBeLessThanOrEqual(400);
    expect(passages[0]!.text.endsWith('.')).toBe(true);
  });

  it('calls a page navigation when most of its words are links', () => {
    const links = 'Intro, install, usage, reference, glossary, index, changelog';
    expect(isNavigationText(links, [[0, links.length]])).toBe(true);
    const prose = `${links}. Then a long paragraph of ordinary prose explains what the tool does and why it exists at all.`;
    expect(isNavigationText(prose, [[0, links.length]])).toBe(false);
  });
});

describe('HTML extraction', () => {
  it('reads a page as a reader would: headings kept, links as words, code fenced, tables as rows, no permalinks', async () => {
    const html = `<html><head><title>Tides — Site</title></head><body><nav>menu</nav><article>
      <h1>Tides<a class="headerlink" href="#t">¶</a></h1>
      <p>The <em>Moon</em> raises <a href="bulges.html">two bulges</a> of water, so most coasts see two high tides a day
      and two low tides between them, roughly twelve hours and twenty-five minutes apart.</p>
      <h2>Terms</h2><dl><dt>spring tide<a class="headerlink" href="#s">¶</a></dt><dd><p>The largest tides, at new and full moon.</p></dd></dl>
      <pre>range = high - low</pre>
      <table><tr><th>Place</th><th>Range</th></tr><tr><td>Bay of Fundy</td><td>16 m</td></tr></table>
    </article></body></html>`;
    const document = await extractHtml(html);
    expect(document.title).toBe('Tides');
    expect(document.text).toContain('The Moon raises two bulges of water');
    expect(document.text).toContain('##### spring tide');
    expect(document.text).toContain('```\nrange = high - low\n```');
    expect(document.text).toContain('| Bay of Fundy | 16 m |');
    expect(document.text).not.toMatch(/¶|bulges\.html|menu|\\/);
    expect(document.linkRanges.map(([start, end]) => document.text.slice(start, end))).toEqual(['two bulges']);
  });
});
