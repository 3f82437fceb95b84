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
  it('answers with the entry of the symbol the question names, from the best-placed page that has it', () => {
    // Django's "What does the SESSION_COOKIE_AGE setting do?": the first search ranked the sessions
    // topic first (its `get_expiry_age()` mentions the setting) and the settings reference second,
    // whose entry is the setting's own.
    const page = (id: string, path: string, score: number, lead: number | undefined, entry: boolean): Note => {
      const { lead: _lead, ...rest } = note(id, path, score);
      return {
        ...rest,
        url: `file:///docs/${id}.html`,
        title: id,
        text: `Passage of ${id}: words that differ from every other passage here.`,
        ...(lead === undefined ? {} : { lead }),
        ...(entry ? { definition: true, entry: true } : {}),
      };
    };
    const question = 'What does the SESSION_COOKIE_AGE setting do?';
    const sessions = page(
      'sessions',
      'How to use sessions › Using sessions in views › get_expiry_age()',
      1.45,
      0,
      false,
    );
    const settings = page('settings', 'Settings › Sessions › SESSION_COOKIE_AGE', 1.53, 1, true);
    // 1.53 × 0.75 (second) would lose to 1.45 × 1 (first).
    expect(answerOutline(question, [sessions, settings], DEFAULT_RESEARCH_SETTINGS).sections[0]?.noteIds).toEqual([
      'settings',
    ]);
    // When no page of the first search has the entry, the best one found later counts so too
    // ("What does the DEFAULT_AUTO_FIELD setting do?": the first search missed the settings reference).
    const later = page('settings', 'Settings › Sessions › SESSION_COOKIE_AGE', 1.53, undefined, true);
    expect(answerOutline(question, [sessions, later], DEFAULT_RESEARCH_SETTINGS).sections[0]?.noteIds).toEqual([
      'settings',
    ]);
    // When one has it, an entry found later keeps the lower prior of a page no first search found.
    const another = { ...page('release', 'Release notes › SESSION_COOKIE_AGE', 1.9, undefined, true) };
    expect(
      answerOutline(question, [sessions, settings, another], DEFAULT_RESEARCH_SETTINGS).sections[0]?.noteIds,
    ).toEqual(['settings']);
    // When the first page has the entry too, a lower page's entry keeps its place ("What does
    // get_object_or_404 do?": the shortcuts reference first, the tutorial's section on it second).
    const shortcuts = page('shortcuts', 'Django shortcut functions › get_object_or_404()', 1.96, 0, true);
    const tutorial = page('tutorial', 'Part 3 › A shortcut: get_object_or_404()', 2.15, 1, true);
    expect(
      answerOutline('What does get_object_or_404 do?', [shortcuts, tutorial], DEFAULT_RESEARCH_SETTINGS).sections[0]
        ?.noteIds,
    ).toEqual(['shortcuts']);
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
