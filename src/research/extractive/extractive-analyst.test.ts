import { describe, expect, it } from 'vitest';
import { unquotedText } from '../quoted-report.ts';
import { parseResearchSettings } from '../research-settings.ts';
import type { Note, SourceText } from '../research-types.ts';
import { ExtractiveAnalyst } from './extractive-analyst.ts';

const analyst = new ExtractiveAnalyst();
const settings = parseResearchSettings({});
const signal = new AbortController().signal;

function source(url: string, title: string, text: string): SourceText {
  return { url, title, text, offset: 0, query: '', provider: 'local', fetched: true, relevance: 1, headings: title };
}

async function notesOf(question: string, page: SourceText, prefix = 'n'): Promise<Note[]> {
  return (await analyst.takeNotes({ question, source: page, iteration: 1, idPrefix: prefix, settings }).run(signal))
    .output;
}

async function overviewOf(question: string, pages: SourceText[]): Promise<{ notes: Note[]; overview: Note[] }> {
  const notes: Note[] = [];
  for (const [index, page] of pages.entries()) notes.push(...(await notesOf(question, page, `s${index}`)));
  const outline = (await analyst.outline({ question, notes, settings }).run(signal)).output;
  const ids = outline.sections[0]?.noteIds ?? [];
  return { notes, overview: ids.map((id) => notes.find((note) => note.id === id)!) };
}

const argparse = source(
  'file:///docs/library/argparse.html',
  'argparse — Parser for command-line options, arguments and sub-commands',
  [
    '# argparse — Parser for command-line options, arguments and sub-commands',
    'The `argparse` module makes it easy to write user-friendly command-line interfaces.',
    'The program defines what it requires, and `argparse` will figure out how to read those out of `sys.argv`.',
    '## The add_argument() method',
    'Define how a single command-line argument should be parsed by the parser.',
    'Each command-line argument is parsed and checked against the choices given to the parser.',
    'Sometimes a script may only parse a few of the command-line arguments and pass the rest on.',
    'When parsing the command line, an argument value that is missing is taken from its default.',
  ].join('\n\n'),
);

describe('the extractive analyst', () => {
  it('lets the first of two chained lead-ins take in the entries below it, in page order (issue 42)', async () => {
    // Texinfo's m4exit page: a lead-in, the macro's entry ending in a lead-in of its own, a second entry.
    const m4exit = source(
      'file:///docs/m4/M4exit.html',
      'M4exit (GNU M4 macro processor)',
      [
        '### 14.3 Exiting from `m4`',
        'If you need to exit from `m4` before the entire input has been read, you can use `m4exit`:',
        '##### Builtin: m4exit ([`code` = 0])',
        'Causes `m4` to exit, with exit status `code`. If `code` is left out, the exit status is zero. If `code` cannot be parsed, or is outside the range of 0 to 255, the exit status is one.',
        'A common use of this is to abort processing:',
        '##### Composite: fatal_error (`message`)',
        'Abort processing with an error message and non-zero status.',
      ].join('\n\n'),
    );
    const notes = await notesOf(
      'Which exit status when the code cannot be parsed or is outside the range 0 to 255?',
      m4exit,
    );
    const first = notes.find((note) => note.text.includes('Causes `m4` to exit'))!;
    expect(first.text.startsWith('If you need to exit from `m4`'), first.text).toBe(true);
    expect(first.text.endsWith('Abort processing with an error message and non-zero status.')).toBe(true);
    expect(notes.filter((note) => note.text.includes('Causes `m4` to exit'))).toHaveLength(1);
  });

  it('quotes a chosen lead-in with the definition list it announces, never ending on its colon (issue 42)', async () => {
    const copy = source(
      'file:///docs/library/copy.html',
      'copy — Shallow and deep copy operations',
      [
        '# copy — Shallow and deep copy operations',
        'Assignment statements in Python do not copy objects, they create bindings between a target and an object.',
        'This module provides generic shallow and deep copy operations (explained below).',
        'Interface summary:',
        '##### copy.copy(obj)',
        'Return a shallow copy of obj.',
        '##### copy.deepcopy(obj[, memo])',
        'Return a deep copy of obj.',
      ].join('\n\n'),
    );
    const notes = await notesOf(
      'What does this module provide: shallow and deep copy operations, interface summary?',
      copy,
    );
    const leadIn = notes.find((note) => note.text.includes('Interface summary:'));
    expect(leadIn, notes.map((note) => note.text).join(' | ')).toBeDefined();
    expect(leadIn!.text.endsWith('Return a deep copy of obj.')).toBe(true);
    // Word for word, at its offsets in the page.
    expect(copy.text.slice(leadIn!.start, leadIn!.end)).toBe(leadIn!.text);
    // The entries' own passages are quoted there, once: no two notes quote the same block.
    const ranges = notes.map((note) => [note.start!, note.end!] as const).sort((a, b) => a[0] - b[0]);
    for (const [index, [, end]] of ranges.slice(0, -1).entries())
      expect(end).toBeLessThanOrEqual(ranges[index + 1]![0]);
  });

  it('opens an answer found deep in a page with the page’s own one-line summary of itself (issue 42)', async () => {
    const gc = source(
      'file:///docs/git-gc.html',
      'git-gc(1)',
      [
        '## NAME',
        'git-gc - Cleanup unnecessary files and optimize the local repository',
        '## SYNOPSIS',
        '```\ngit gc [--aggressive] [--auto] [--quiet]\n```',
        '## DESCRIPTION',
        'Runs a number of housekeeping tasks within the current repository, such as compressing file revisions to reduce disk space and increase performance.',
        '## OPTIONS',
        'Usually git gc runs very quickly while providing good disk space utilization and performance.',
      ].join('\n\n'),
    );
    const { overview } = await overviewOf('How do I compress my repository to save disk space?', [gc]);
    const texts = overview.map((note) => note.text);
    expect(texts[0]).toBe('git-gc - Cleanup unnecessary files and optimize the local repository');
    expect(texts[1]).toContain('compressing file revisions to reduce disk space');
    expect(overview[0]!.summary).toBe(true);
  });

  it('finds the summary of a page whose site menu comes before its title (Node.js API pages)', async () => {
    const menu = Array.from({ length: 60 }, (_, index) => `- Module number ${index}`).join('\n');
    const vm = source(
      'file:///docs/api/vm.html',
      'VM (executing JavaScript)',
      [
        'Node.js',
        menu,
        'Table of contents',
        '## VM (executing JavaScript)',
        'Stability: 2 - Stable',
        'The `node:vm` module enables compiling and running code within V8 Virtual Machine contexts.',
        'The `node:vm` module is not a security mechanism. Do not use it to run untrusted code.',
        'JavaScript code can be compiled and run immediately or compiled, saved, and run later.',
        'A common use case is to run the code in a different V8 Context. This means invoked code has a different global object than the invoking code.',
        'One can provide the context by contextifying an object. The invoked code treats any property in the context like a global variable.',
        'The `require()` in the above case shares the state with the context it is passed from.',
        '### What does it mean to contextify an object?',
        'A context is an execution environment that allows separate, unrelated applications to run a string of code in a single instance of V8.',
      ].join('\n\n'),
    );
    expect(vm.text.indexOf('## VM')).toBeGreaterThan(800);
    const { overview } = await overviewOf('How can I run a string of code in a separate context?', [vm]);
    expect(overview[0]!.summary).toBe(true);
    expect(overview[0]!.text).toContain('enables compiling and running code');
  });

  it('never opens an answer with a lead-in that announces a list (it is no summary)', async () => {
    // m4's "Operation modes": the page opens on a lead-in; the answer is the fourth entry.
    const modes = source(
      'file:///docs/m4/Operation-modes.html',
      'Operation modes (GNU M4 macro processor)',
      [
        '### 2.1 Command line options for operation modes',
        'Several options control the overall operation of `m4`:',
        '##### `--help`',
        'Print a help summary on standard output, then immediately exit `m4` without reading any input files.',
        '##### `--version`',
        'Print the version number of the program on standard output, then immediately exit `m4`.',
        '##### `-P`',
        '##### `--prefix-builtins`',
        'Internally modify all builtin macro names so they all start with the prefix `m4_`.',
      ].join('\n\n'),
    );
    const { notes, overview } = await overviewOf('What does m4 -P do?', [modes]);
    expect(overview.map((note) => note.text).join('\n')).toContain('Internally modify all builtin macro names');
    // On the whole page the lead-in then brought only the first entry, above the answer.
    expect(notes.filter((note) => note.summary)).toEqual([]);
  });

  it('takes no method’s description for the page’s summary when what was read starts at the method', async () => {
    const perf: SourceText = {
      ...source(
        'file:///docs/api/perf_hooks.html',
        'Performance measurement APIs',
        [
          '#### `performance.toJSON()`',
          'An object which is JSON representation of the `performance` object. It is similar to `window.performance.toJSON` in browsers.',
          '#### `performance.now()`',
          'Returns the current high resolution millisecond timestamp, where 0 represents the start of the current `node` process.',
        ].join('\n\n'),
      ),
      headings: 'Performance measurement APIs › perf_hooks.performance',
      // Far from the document's start, as a search reads a long page.
      offset: 41_000,
    };
    const notes = await notesOf('How do I time how long a piece of code takes with high precision?', perf);
    expect(notes.filter((note) => note.summary)).toEqual([]);
  });

  it('never opens an answer with a preface that does not name the page (it is no summary)', async () => {
    const architecture = source(
      'file:///docs/ARCHITECTURE.md',
      'Quarry architecture',
      [
        '# Quarry architecture',
        'This is the map of the code as it is. Where the code took a different turn, this page says so.',
        '## Layers',
        'The layers are listed from the bottom up, each importing only those below it.',
        'Every module belongs to exactly one layer, and a test checks the imports.',
        '## How a session survives a crash',
        'A session survives a crash because every step of the research is journaled in the store the moment it completes.',
      ].join('\n\n'),
    );
    const { overview } = await overviewOf('How does a session survive a crash?', [architecture]);
    expect(overview[0]!.text).toContain('journaled in the store');
    expect(overview.map((note) => note.text).join('\n')).not.toContain('map of the code');
  });

  it('answers from the lead that says what a page is for, not only from its densest passage', async () => {
    const { overview } = await overviewOf('How do I parse command-line arguments?', [argparse]);
    expect(overview.map((note) => note.text)).toContain(
      'The `argparse` module makes it easy to write user-friendly command-line interfaces.',
    );
  });

  it('answers from the best page of the first search that it can quote, whatever another page scores (issue 31)', async () => {
    const question = 'How do I parse command-line arguments?';
    const searched = { ...argparse, lead: 0 };
    // A page the first search ranked second, titled for the question, with one dense sentence.
    const titled = source(
      'file:///docs/howto/parse-command-line-arguments.html',
      'Parse command-line arguments',
      'Parse command-line arguments with a parser that reads each command-line argument and parses arguments.',
    );
    const { overview, notes } = await overviewOf(question, [searched, { ...titled, lead: 1 }]);
    expect(overview[0]!.url).toBe(argparse.url);
    // Without a first search to go by, the better-scoring page answers (a follow-up's rule).
    const unled = notes.map(({ lead: _lead, ...note }) => note);
    const outline = (await analyst.outline({ question, notes: unled, settings }).run(signal)).output;
    const first = unled.find((note) => note.id === outline.sections[0]!.noteIds[0]);
    expect(first?.url).toBe(titled.url);
  });

  it('takes no note of a lead-in alone whose announced text was not read (issue 42)', async () => {
    // PostgreSQL's ALTER TABLE examples, read in two excerpts: the first ends on a lead-in, and the
    // command it announces is not the text that follows (the second excerpt is from further down).
    const first = [
      '```\nALTER TABLE distributors VALIDATE CONSTRAINT distfk;\n```',
      'To add a (multicolumn) unique constraint to a table:',
      '```\nALTER TABLE distributors ADD CONSTRAINT dist_id_zipcode_key UNIQUE (dist_id, zipcode);\n```',
      'To add an automatically named primary key constraint to a table, noting that a table can only ever have one primary key:',
      '```\nALTER TABLE distributors ADD PRIMARY KEY (dist_id);\n```',
      'To move a table to a different tablespace:',
      '```\nALTER TABLE distributors SET TABLESPACE fasttablespace;\n```',
      'To move a table to a different schema:',
      '```\nALTER TABLE myschema.distributors SET SCHEMA yourschema;\n```',
      'To recreate a primary key constraint, without blocking updates while the index is rebuilt:',
    ].join('\n\n');
    const second = '```\nALTER TABLE measurement\n    DETACH PARTITION measurement_y2015m12;\n```';
    const examples: SourceText = {
      ...source('file:///docs/sql-altertable.html', 'ALTER TABLE', `${first}\n\n${second}`),
      segments: [
        { at: 0, start: 46631, headings: 'ALTER TABLE › Examples' },
        { at: first.length + 2, start: 48314, headings: 'ALTER TABLE › Examples' },
      ],
    };
    const notes = await notesOf('How do I add an index to a big table without blocking writes?', examples);
    expect(notes.length).toBeGreaterThan(0);
    expect(notes.some((note) => note.text.includes('To recreate a primary key constraint'))).toBe(false);
    expect(notes.every((note) => !/:\s*$/.test(note.text))).toBe(true);
  });

  it('quotes the passage that says how whole, with the command its lead-in announces, under where it is', async () => {
    const tutorial = source(
      'file:///docs/tutorial/venv.html',
      '12. Virtual Environments and Packages',
      [
        '# 12. Virtual Environments and Packages',
        '## 12.2. Creating Virtual Environments',
        'The module used to create and manage virtual environments is called `venv`.',
        'To create a virtual environment, decide upon a directory where you want to place it, and run the `venv` module as a script with the directory path:',
        '```\npython -m venv tutorial-env\n```',
        'This will create the `tutorial-env` directory if it doesn’t exist.',
      ].join('\n\n'),
    );
    const question = 'How do I create a virtual environment?';
    const { overview } = await overviewOf(question, [tutorial]);
    const instruction = overview.find((note) => note.text.includes('To create a virtual environment'));
    // The lead-in comes with the command it announces, never its colon alone.
    expect(instruction?.text).toContain('with the directory path:\n\n```\npython -m venv tutorial-env\n```');
    const section = { title: 'Answer', focus: question, noteIds: [instruction!.id] };
    const written = (
      await analyst
        .writeSection({ question, section, notes: [instruction!], citationFor: { [tutorial.url]: 1 }, settings })
        .run(signal)
    ).output;
    expect(written).toContain(
      [
        '> To create a virtual environment, decide upon a directory where you want to place it, and run the `venv` module as a script with the directory path:',
        '>',
        '> ```',
        '> python -m venv tutorial-env',
        '> ```',
      ].join('\n'),
    );
    expect(
      written.endsWith('\n\n— 12. Virtual Environments and Packages › 12.2. Creating Virtual Environments [1]'),
    ).toBe(true);
    // Word for word: every quote is the source's text.
    expect(unquotedText(`## Answer\n\n${written}\n\n## Sources\n`, () => tutorial.text)).toEqual([]);
  });

  it('answers a follow-up about an option from its entry, not from a synopsis that lists it', async () => {
    const stored = (id: string, headings: string, text: string, score: number): Note => ({
      id,
      url: 'file:///docs/git-clean.html',
      title: 'git-clean(1)',
      text,
      query: 'git clean -n',
      iteration: 1,
      score,
      headings,
      lead: 0,
    });
    const synopsis = stored('s', 'git-clean(1) Manual Page › SYNOPSIS', '```\ngit clean [-d] [-f] [-i] [-n]\n```', 1.6);
    const force = stored(
      'f',
      'git-clean(1) Manual Page › CONFIGURATION › clean.requireForce',
      'A boolean to make git-clean do nothing unless given -f, -i or -n.',
      1.6,
    );
    const entry = stored(
      'e',
      'git-clean(1) Manual Page › OPTIONS › -i, --interactive',
      'Show what would be done and clean files interactively.',
      0.9,
    );
    const question = 'What does -i do?';
    const assess = (notes: Note[]) =>
      analyst
        .assessFollowUp({ question, notes, conversation: '', settings })
        .run(signal)
        .then((result) => result.output);
    // Notes that only list -i send the follow-up to research; its entry answers it.
    expect((await assess([synopsis, force])).action).toBe('research');
    expect((await assess([synopsis, force, entry])).action).toBe('answer');
    const answer = (
      await analyst
        .answer({
          question,
          notes: [synopsis, force, entry],
          report: '',
          conversation: '',
          citationFor: { [entry.url]: 1 },
          settings,
        })
        .run(signal)
    ).output;
    expect(answer.startsWith('> Show what would be done and clean files interactively.')).toBe(true);
    // An identifier is named as the manual heads its entry, as an option is: a note that mentions
    // `clean.requireForce` in passing does not answer "What does clean.require_force do?"; its entry does.
    const mention = stored(
      'm',
      'git-clean(1) Manual Page › DESCRIPTION',
      'Unless clean_require_force is false, -f is needed.',
      1.6,
    );
    const setting = stored(
      'c',
      'git-clean(1) Manual Page › CONFIGURATION › clean_require_force',
      'A boolean that makes git-clean refuse to run without -f.',
      0.9,
    );
    const assessIdentifier = (notes: Note[]) =>
      analyst
        .assessFollowUp({ question: 'What does clean_require_force do?', notes, conversation: '', settings })
        .run(signal)
        .then((result) => result.output.action);
    expect(await assessIdentifier([mention])).toBe('research');
    expect(await assessIdentifier([mention, setting])).toBe('answer');
  });

  it('marks the notes of the entry of a symbol the question names, and only those', async () => {
    // The answer's outline weighs such an entry as if on the first search's first page
    // (answer-outline.test.ts): "What does the SESSION_COOKIE_AGE setting do?" on Django's manual.
    const question = 'What does the SESSION_COOKIE_AGE setting do?';
    const sessions = source(
      'file:///docs/sessions.html',
      'How to use sessions',
      [
        '# How to use sessions',
        '## Using sessions in views',
        '### get_session_cookie_age()',
        'Returns the age of session cookies, in seconds. Defaults to SESSION_COOKIE_AGE.',
      ].join('\n\n'),
    );
    const reference = source(
      'file:///docs/settings.html',
      'Settings',
      [
        '# Settings',
        '## Sessions',
        '### SESSION_COOKIE_AGE',
        'Default: 1209600 (2 weeks, in seconds)',
        'The age of session cookies, in seconds.',
        '### SESSION_COOKIE_NAME',
        'The name of the cookie to use for sessions.',
      ].join('\n\n'),
    );
    const notes = [...(await notesOf(question, sessions, 'a')), ...(await notesOf(question, reference, 'b'))];
    expect(notes.some((note) => note.headings?.endsWith('get_session_cookie_age()'))).toBe(true);
    expect(notes.filter((note) => note.entry).map((note) => note.headings)).toEqual([
      'Settings › Sessions › SESSION_COOKIE_AGE',
    ]);
    expect(notes.find((note) => note.entry)?.definition).toBe(true);
  });

  it('answers a follow-up by its own symbols: an entry stored for an earlier question is not one for it, in its answer and its report', async () => {
    // Stored by "What does the SESSION_COOKIE_AGE setting do?": the setting's entry, on the first
    // search's second page. "What is the age of session cookies?" names no symbol, so the pages keep
    // their places.
    const entry: Note = {
      id: 'a',
      url: 'file:///docs/settings.html',
      title: 'Settings',
      text: 'Default: 1209600 (2 weeks, in seconds)\n\nThe age of session cookies, in seconds.',
      query: 'session_cookie_age setting',
      iteration: 1,
      score: 1.2,
      headings: 'Settings › Sessions › SESSION_COOKIE_AGE',
      lead: 1,
      definition: true,
      entry: true,
    };
    const method: Note = {
      id: 'm',
      url: 'file:///docs/sessions.html',
      title: 'How to use sessions',
      text: 'Returns the age of session cookies, in seconds. Defaults to SESSION_COOKIE_AGE.',
      query: 'session_cookie_age setting',
      iteration: 1,
      score: 1,
      headings: 'How to use sessions › Using sessions in views › get_session_cookie_age()',
      lead: 0,
    };
    const answer = (
      await analyst
        .answer({
          question: 'What is the age of session cookies?',
          notes: [entry, method],
          report: '',
          conversation: '',
          citationFor: { [entry.url]: 1, [method.url]: 2 },
          settings,
        })
        .run(signal)
    ).output;
    expect(answer.startsWith('> Returns the age of session cookies, in seconds.')).toBe(true);
    // The same in the report of a follow-up that researched again, whose outline has these notes too.
    const outline = (
      await analyst
        .outline({ question: 'What is the age of session cookies?', notes: [entry, method], settings })
        .run(signal)
    ).output;
    expect(outline.sections[0]?.noteIds[0]).toBe('m');
  });

  it('quotes another page in a follow-up answer with its passage, never its summary alone', async () => {
    const stored = (
      id: string,
      page: string,
      headings: string,
      text: string,
      score: number,
      summary = false,
    ): Note => ({
      id,
      url: `file:///docs/${page}.html`,
      title: `${page}(1)`,
      text,
      query: 'remove untracked files',
      iteration: 1,
      score,
      headings,
      lead: page === 'git-clean' ? 0 : 1,
      ...(summary ? { summary: true } : {}),
    });
    const notes = [
      stored(
        'a1',
        'git-clean',
        'git-clean(1) Manual Page › DESCRIPTION',
        'Cleans the working tree by recursively removing untracked files that are not under version control.',
        3,
      ),
      stored(
        'a2',
        'git-clean',
        'git-clean(1) Manual Page › DESCRIPTION',
        'Normally, only untracked files unknown to Git are removed, but ignored files can be removed too.',
        2.9,
      ),
      stored('b0', 'git-status', 'git-status(1) Manual Page › NAME', 'git-status - Show untracked files', 2.5, true),
      stored(
        'b1',
        'git-status',
        'git-status(1) Manual Page › OPTIONS',
        'Show untracked files; files removed from the index are listed too.',
        2.4,
      ),
    ];
    const answer = (
      await analyst
        .answer({
          question: 'How do I remove untracked files?',
          notes,
          report: '',
          conversation: '',
          citationFor: { [notes[0]!.url]: 1, [notes[2]!.url]: 2 },
          settings,
        })
        .run(signal)
    ).output;
    expect(answer).toContain('Cleans the working tree');
    expect(answer.includes('git-status - Show untracked files')).toBe(answer.includes('Show untracked files; files'));
  });

  it('searches a terse follow-up with the subject of the question before it', async () => {
    const conversation = [
      'User: What does git clean -n do?',
      'Assistant: > Don’t actually remove anything.',
      'User: What does -x do?',
    ].join('\n\n');
    const [first] = (await analyst.plan({ question: 'What does -x do?', settings, context: conversation }).run(signal))
      .output.queries;
    expect(first).toContain('-x');
    expect(first).toContain('clean');
    // A follow-up that names its own subject is searched as it is.
    const own = 'How do I make git clean remove ignored files too?';
    expect((await analyst.plan({ question: own, settings, context: conversation }).run(signal)).output.queries).toEqual(
      (await analyst.plan({ question: own, settings }).run(signal)).output.queries,
    );
  });
});
