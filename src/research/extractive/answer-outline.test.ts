import { describe, expect, it } from 'vitest';
import { parseResearchSettings } from '../research-settings.ts';
import type { Note } from '../research-types.ts';
import { answerOutline, placeOf } from './answer-outline.ts';

const DEFAULT_RESEARCH_SETTINGS = parseResearchSettings({});

const note = (id: string, headings: string, score: number): Note => ({
  id,
  url: `file:///docs/${id}.html`,
  title: 'git-archive(1)',
  text: `A passage ${id} of the page that says something about archives and their prefixes.`,
  query: 'archive',
  iteration: 0,
  score,
  headings,
  heading: headings.split(' › ').at(-1),
  lead: 0,
});

describe('the answer outline (issue 42)', () => {
  it('never titles a section with a command line, a prompt or a statement: the section above it names it', () => {
    const terms = [
      'git archive -o latest.tar --prefix=project/ HEAD',
      '$ make -k all',
      'x = compile(source)',
      'tar xf archive.tar -C /srv',
      '--full-history with parent rewriting',
    ];
    for (const term of terms) {
      const outline = answerOutline('How do I make a tarball?', [note('a', `git-archive(1) › EXAMPLES › ${term}`, 1)], {
        ...DEFAULT_RESEARCH_SETTINGS,
      });
      expect(outline.sections[0]?.title).toBe('EXAMPLES — git-archive(1)');
    }
    // A topic that mentions an option is a topic.
    const topic = answerOutline('How do I amend?', [note('b', 'git-archive(1) › Using --amend safely', 1)], {
      ...DEFAULT_RESEARCH_SETTINGS,
    });
    expect(topic.sections[0]?.title).toBe('Using --amend safely — git-archive(1)');
  });

  it('says where a quote is with the code entry it documents, though code never titles a section', () => {
    const watch = {
      ...note(
        'd',
        'File system › Callback API › fs.watch(filename[, options][, listener]) › Caveats › Availability',
        1,
      ),
      title: 'File system',
    };
    expect(placeOf(watch)).toBe('File system › fs.watch(filename[, options][, listener]) › Caveats › Availability');
    const option = { ...note('e', 'git-clean(1) Manual Page › OPTIONS › -x', 1), title: 'git-clean(1)' };
    expect(placeOf(option)).toBe('git-clean(1) Manual Page › OPTIONS › -x');
    expect(answerOutline('How do I clean?', [option], { ...DEFAULT_RESEARCH_SETTINGS }).sections[0]?.title).toBe(
      'OPTIONS — git-clean(1) Manual Page',
    );
    // A path of topics alone: its last two.
    expect(placeOf({ ...note('f', 'git-reset(1) › EXAMPLES › Undo a commit', 1), title: 'git-reset(1)' })).toBe(
      'git-reset(1) › EXAMPLES › Undo a commit',
    );
    // An entry named after its page is the entry, not the page's own heading.
    const member = {
      ...note('g', 'URL › The WHATWG URL API › Class: URL › url.searchParams', 1),
      title: 'URL | Node.js v18.20.4 Documentation',
    };
    expect(placeOf(member)).toBe('URL › The WHATWG URL API › Class: URL › url.searchParams');
  });

  it('opens the answer with the passage that defines what is asked about, when the best only shows it in use', () => {
    const page = (id: string, start: number, score: number, definition: boolean): Note => ({
      ...note(id, 'git-push(1) Manual Page › OPTIONS › --force-with-lease', score),
      url: 'file:///docs/git-push.html',
      title: 'git-push(1)',
      text: `Passage ${id} of the entry.`,
      start,
      end: start + 50,
      ...(definition ? { definition: true } : {}),
    });
    // An example further down the entry, bridged with the block after it, scores a little higher.
    const example = page('example', 3000, 1.92, false);
    const entry = page('entry', 100, 1.91, true);
    const outline = answerOutline(
      'What does git push --force-with-lease do?',
      [example, entry],
      DEFAULT_RESEARCH_SETTINGS,
    );
    expect(outline.sections[0]?.noteIds).toEqual(['entry', 'example']);
  });
  it('ranks a page by its place in the first search, though its best passage came from a later search', () => {
    // Django's "run code after commit": the first search ranked transactions first and testing tools
    // second; a later search found each page's best passage, which carries no place of its own.
    const passage = (id: string, page: string, start: number, score: number, lead?: number): Note => {
      const { lead: _lead, ...rest } = note(id, `${page} › Section ${id}`, score);
      return {
        ...rest,
        url: `file:///docs/${page}.html`,
        title: page,
        text: `Passage ${id}: words of ${page} that differ from every other passage here.`,
        start,
        end: start + 60,
        ...(lead === undefined ? {} : { lead }),
      };
    };
    const notes = [
      passage('later-first', 'transactions', 100, 1.36),
      passage('searched-first', 'transactions', 900, 1.05, 0),
      passage('later-second', 'testing-tools', 100, 1.4),
      passage('searched-second', 'testing-tools', 900, 1.39, 1),
    ];
    const outline = answerOutline('How do I run code after a commit?', notes, DEFAULT_RESEARCH_SETTINGS);
    // 1.36 × 1 (first) beats 1.4 × 0.75 (second); read by the best passage's own place, each page
    // got the unsearched prior and the second page led.
    expect(outline.sections[0]?.noteIds[0]).toBe('later-first');
    // The same when the passage read in the first search is left out, covered by the later one.
    const covered = [
      passage('later-first', 'transactions', 100, 1.36),
      passage('read-first', 'transactions', 120, 1.05, 0),
    ];
    const again = answerOutline(
      'How do I run code after a commit?',
      [...covered, ...notes.slice(2)],
      DEFAULT_RESEARCH_SETTINGS,
    );
    expect(again.sections[0]?.noteIds).toEqual(['later-first']);
  });
});

describe('the pages after the answer', () => {
  it('quote a page’s own summary of itself (its NAME line) before its best passage', () => {
    const page = (id: string, url: string, start: number, score: number, lead: number, summary = false): Note => ({
      ...note(id, `${url}(1) Manual Page › ${summary ? 'NAME' : 'OPTIONS › -x'}`, score),
      url: `file:///docs/${url}.html`,
      title: `${url}(1)`,
      text: `Passage ${id}: words of ${url} that differ from every other passage here.`,
      start,
      end: start + 60,
      lead,
      ...(summary ? { summary: true } : {}),
    });
    const answer = page('answer', 'git-update-index', 500, 1.46, 0);
    const option = page('option', 'git-clean', 1796, 1.34, 1);
    const name = page('name', 'git-clean', 37, 0.67, 1, true);
    const outline = answerOutline('How do I delete the untracked files?', [answer, option, name], {
      ...DEFAULT_RESEARCH_SETTINGS,
    });
    expect(outline.sections.map((section) => section.noteIds)).toEqual([['answer'], ['name', 'option']]);
    // Under a title that names the page the summary introduces.
    expect(outline.sections[1]?.title).toBe('OPTIONS — git-clean(1) Manual Page');
  });

  it('quotes a list item two entries share once, whatever item comes before it', () => {
    const entry = (id: string, opening: string, family: string, score: number): Note => ({
      ...note(id, `DNS › dns.resolve${family}()`, score),
      url: 'file:///docs/dns.html',
      start: id === 'four' ? 0 : 1000,
      end: id === 'four' ? 500 : 1500,
      text: [
        opening,
        '- `options` <Object>',
        '- `ttl` <boolean> Retrieve the Time-To-Live value (TTL) of each record.',
        `Uses the DNS protocol to resolve IPv${family} addresses for the hostname.`,
      ].join('\n'),
    });
    const outline = answerOutline(
      'How do I resolve a hostname?',
      [
        entry('four', 'Added in: v10.6.0', '4', 2),
        entry('six', '- `hostname` <string> Host name to resolve.', '6', 1.9),
      ],
      DEFAULT_RESEARCH_SETTINGS,
    );
    expect(outline.sections.flatMap((section) => section.noteIds)).toEqual(['four']);
  });
});
