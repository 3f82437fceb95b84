import { describe, expect, it } from 'vitest';
import type { SourceText } from '../research-types.ts';
import { withAnnounced } from './definition-entries.ts';
import { blocksOf, passageAround, passagesOf, withoutCutLeadIn } from './passages.ts';

function source(text: string, segments?: SourceText['segments']): SourceText {
  return {
    url: 'file:///docs/page.html',
    title: 'Page',
    text,
    offset: 0,
    query: '',
    provider: 'local',
    fetched: true,
    ...(segments ? { segments } : {}),
  };
}

/** The text of the passage that holds the block starting with `opening`. */
function passageOf(text: string, opening: string): string {
  const page = source(text);
  const blocks = blocksOf(page);
  const index = blocks.findIndex((block) => block.text.startsWith(opening));
  expect(index, opening).toBeGreaterThanOrEqual(0);
  const run = passageAround(blocks, index);
  expect(run, opening).not.toBeNull();
  return text.slice(blocks[run!.first]!.start, blocks[run!.last]!.end);
}

describe('blocks and passages (issue 42)', () => {
  it('reads paragraphs, lists, code, tables and note boxes as blocks, each a slice of the text', () => {
    const text = [
      '# Title',
      'A paragraph that runs\nover two lines.',
      '- one item\n- another item\n  that goes on\n\n  with a second paragraph',
      '```\nmake all\n\nmake install\n```',
      '| a | b |\n| 1 | 2 |',
      '> **Note**\n>\n> A note box.',
    ].join('\n\n');
    const blocks = blocksOf(source(text));
    expect(blocks.map((block) => block.kind)).toEqual(['heading', 'paragraph', 'list', 'code', 'table', 'note']);
    for (const block of blocks) expect(text.slice(block.start, block.end)).toBe(block.text);
    expect(blocks[2]!.text).toContain('with a second paragraph');
    expect(blocks[3]!.text).toBe('```\nmake all\n\nmake install\n```');
  });

  it('quotes a lead-in with the entries of the definition list it announces, each whole, as many as fit', () => {
    // Sphinx's module pages: a definition list's terms reach the text as level-5 headings.
    const text = [
      '# copy — Shallow and deep copy operations',
      'This module provides generic shallow and deep copy operations (explained below).',
      'Interface summary:',
      '##### copy.copy(x)',
      'Return a shallow copy of x.',
      '##### copy.deepcopy(x[, memo])',
      'Return a deep copy of x.',
      '##### exception copy.Error',
      `Raised for module specific errors. ${'The difference between shallow and deep copying is only relevant for compound objects. '.repeat(30)}`,
    ].join('\n\n');
    const page = source(text);
    const blocks = blocksOf(page);
    const passages = passagesOf(page, blocks);
    // Ranked as it stands: the entries never change which passages there are.
    const leadIn = passages.find((passage) => passage.text === 'Interface summary:')!;
    expect(leadIn).toBeDefined();
    const quoted = withAnnounced(page, blocks, leadIn);
    expect(quoted.text).toMatch(/^Interface summary:\n\n##### copy\.copy\(x\)\n\nReturn a shallow copy of x\./);
    expect(quoted.text.endsWith('Return a deep copy of x.')).toBe(true);
    expect(text.slice(quoted.start, quoted.end)).toBe(quoted.text);
    // Up to the entry the caller refuses (one another chosen passage reaches beyond).
    const deep = blocks.findIndex((block) => block.text.startsWith('##### copy.deepcopy'));
    const beforeDeep = (from: number) => from >= deep;
    expect(withAnnounced(page, blocks, leadIn, beforeDeep).text.endsWith('Return a shallow copy of x.')).toBe(true);
    expect(withAnnounced(page, blocks, leadIn, () => true)).toBe(leadIn);
    // A first entry too long to quote whole: its term and its first passage, never the colon alone.
    const long = source(
      [
        '## 11.6 Substituting text by regular expression',
        'Global substitution in a string is done by `patsubst`:',
        '##### Builtin: patsubst (`string`, `regexp`, [`replacement`])',
        'Searches `string` for matches of `regexp`, and substitutes `replacement` for each match.',
        `The parts of \`string\` that are not covered by any match of \`regexp\` are copied to the expansion. ${'Whenever a match is found, the search proceeds from the end of the match. '.repeat(40)}`,
      ].join('\n\n'),
    );
    const longBlocks = blocksOf(long);
    const globalLeadIn = passagesOf(long, longBlocks).find((passage) =>
      passage.text.startsWith('Global substitution'),
    )!;
    expect(globalLeadIn.text.endsWith(':')).toBe(true);
    expect(
      withAnnounced(long, longBlocks, globalLeadIn).text.endsWith('substitutes `replacement` for each match.'),
    ).toBe(true);
    // A lead-in before an ordinary heading stays as it was.
    const plain = source(text.replace(/#####/g, '##'));
    const plainBlocks = blocksOf(plain);
    const plainLeadIn = passagesOf(plain, plainBlocks).find((passage) => passage.text === 'Interface summary:')!;
    expect(withAnnounced(plain, plainBlocks, plainLeadIn)).toBe(plainLeadIn);
  });

  it("quotes a lead-in with terms in a row that share one description (Texinfo's @deffnx), filed under both", () => {
    const leadIn = '### 9.1 Including named files\n\nThere are two builtin macros in `m4` for including files:';
    const entry = [
      '##### Builtin: include (`file`)',
      '##### Builtin: sinclude (`file`)',
      'Both macros cause the file named `file` to be read by `m4`.',
    ].join('\n\n');
    const text = `${leadIn}\n\n${entry}`;
    // As the index reads a page back: two passages, the second filed under both terms (or, in an
    // index made before reader version 4, under the last).
    for (const filed of ['Builtin: include (file), Builtin: sinclude (file)', 'Builtin: sinclude (file)']) {
      const page = source(text, [
        { at: 0, start: 0, headings: '9.1 Including named files' },
        { at: leadIn.length + 2, start: leadIn.length + 2, headings: `9.1 Including named files › ${filed}` },
      ]);
      const blocks = blocksOf(page);
      expect(blocks.at(-1)!.headings).toBe(
        '9.1 Including named files › Builtin: include (file), Builtin: sinclude (file)',
      );
      const announcing = passagesOf(page, blocks).find((passage) => passage.text.endsWith('for including files:'))!;
      const quoted = withAnnounced(page, blocks, announcing);
      expect(quoted.text).toBe(`There are two builtin macros in \`m4\` for including files:\n\n${entry}`);
    }
  });

  it('quotes a lead-in with a long entry up to the end of a chosen passage that runs on past its opening', () => {
    const text = [
      '### 14.2 Printing current location',
      'To make it possible to specify the location of an error, three utility builtins exist:',
      '##### Builtin: __file__',
      '##### Builtin: __line__',
      'Expand to the quoted name of the current input file and the current input line number.',
      'Line numbers start at 1 for each file.',
      `The syncline option uses this notion of current file and line. ${'Redefining the location macros has no effect. '.repeat(60)}`,
    ].join('\n\n');
    const page = source(text);
    const blocks = blocksOf(page);
    const announcing = passagesOf(page, blocks).find((passage) => passage.text.endsWith('builtins exist:'))!;
    const expand = blocks.findIndex((block) => block.text.startsWith('Expand to'));
    // Chosen for itself: the description's first two paragraphs, which the lead-in's quote must not cut.
    const chosen = { first: expand, last: expand + 1 };
    const crosses = (from: number, to: number) =>
      chosen.first <= to && chosen.last >= from && (chosen.first < from || chosen.last > to);
    const quoted = withAnnounced(page, blocks, announcing, crosses);
    expect(quoted.text.startsWith('To make it possible')).toBe(true);
    expect(quoted.text.endsWith('Line numbers start at 1 for each file.')).toBe(true);
  });

  it('never ends a quote on a lead-in whose announced block does not come with it', () => {
    const first = 'Another useful command-line flag is `-f`, which keeps displaying new messages.';
    const leadIn =
      "If a service doesn't seem to be working, check its logs. For instance, assume the SSH server doesn't work:";
    const text = `${first}\n\n${leadIn}`;
    const page = source(text);
    const blocks = blocksOf(page);
    const both = { first: 0, last: 1, text, start: 0, end: text.length, headings: '', wholeSection: false };
    const trimmed = withoutCutLeadIn(page, blocks, both);
    expect(trimmed.text).toBe(first);
    expect(text.slice(trimmed.start, trimmed.end)).toBe(trimmed.text);
    // A lead-in that is all a passage is stays: there is nothing else to quote.
    const alone = { ...both, first: 1, start: first.length + 2, text: leadIn };
    expect(withoutCutLeadIn(page, blocks, alone)).toBe(alone);
    // "Here’s an example…" announces as "Here is an example…" does, whatever ends it (Django's time
    // zones page: "Here’s an example that stores the current timezone in the session. (It skips
    // error handling entirely for the sake of simplicity.)").
    for (const announcing of [
      'Here’s an example that stores the current timezone in the session. (It skips error handling.)',
      "Here's an example that stores the current timezone in the session.",
    ]) {
      const example = `${first}\n\n${announcing}`;
      const examplePage = source(example);
      const run = { ...both, text: example, end: example.length };
      expect(withoutCutLeadIn(examplePage, blocksOf(examplePage), run).text).toBe(first);
    }
  });

  it('quotes a long paragraph with a long note box after it, rather than never quoting the paragraph', () => {
    // A manual's answer (1,100 characters) followed by a note box (1,500): over the passage length
    // together, but a caveat is never why the answer cannot be quoted.
    const answer = `GRUB 2 configuration is stored in /boot/grub/grub.cfg, but this file is generated from others. ${'Be careful not to modify it by hand. '.repeat(28)}`;
    const note = `> **Caution**\n>\n> ${'One of the most often reported issues is an error at boot. '.repeat(25)}`;
    const text = ['## GRUB 2 Configuration', answer.trim(), note].join('\n\n');
    expect(answer.length).toBeGreaterThan(1000);
    expect(answer.length + note.length).toBeGreaterThan(2400);
    const quoted = passageOf(text, 'GRUB 2 configuration is stored');
    expect(quoted).toContain('generated from others');
    expect(quoted).toContain('often reported issues');
    // A passage whose own words are too long is still not quoted.
    const tooLong = ['## Long', `${'A sentence that goes on and on. '.repeat(90)}`.trim()].join('\n\n');
    const blocks = blocksOf(source(tooLong));
    expect(passageAround(blocks, 1)).toBeNull();
  });

  it('brings the caveat after a recommendation: the next paragraph that warns, and a note box', () => {
    const text = [
      '## Synchronous',
      'Setting synchronous to OFF makes writes much faster.',
      'With synchronous OFF, SQLite continues without syncing as soon as it has handed data off to the operating system. If the application running SQLite crashes, the data will be safe, but the database might become corrupted if the operating system crashes or the computer loses power.',
      '## Journal',
      'WAL mode is usually faster.',
      '> **Warning**\n>\n> WAL does not work over a network filesystem.',
    ].join('\n\n');
    expect(passageOf(text, 'Setting synchronous')).toContain('might become corrupted');
    expect(passageOf(text, 'WAL mode')).toContain('does not work over a network filesystem');
    // Another section's text never comes along.
    expect(passageOf(text, 'Setting synchronous')).not.toContain('WAL');
  });

  it('never separates "This program fails because…" from the program it follows', () => {
    const text = [
      '## Copying files',
      'Here is a program that copies a file:',
      '```\ncopy(a, b)\n```',
      'This program fails because it does not check whether the file exists.',
      'A correct version checks first.',
    ].join('\n\n');
    for (const opening of ['Here is a program', '```', 'This program fails'])
      expect(passageOf(text, opening)).toBe(
        'Here is a program that copies a file:\n\n```\ncopy(a, b)\n```\n\nThis program fails because it does not check whether the file exists.',
      );
  });

  it('brings the code block a lead-in announces, and the lead-in a code block needs', () => {
    const text = [
      '## Installing',
      'To install the package, run the following command:',
      '```\napt install quarry\n```',
      'The package is then ready.',
    ].join('\n\n');
    const expected = 'To install the package, run the following command:\n\n```\napt install quarry\n```';
    expect(passageOf(text, 'To install')).toBe(expected);
    expect(passageOf(text, '```')).toBe(expected);
  });

  it('brings the code block a list announces in its last item', () => {
    const text = [
      '## Combined diff format',
      '1. The from-file line is changed.\n2. The chunk header is modified. The change is similar to the change in the index header:',
      '```\n@@@ <from-file-range> <to-file-range> @@@\n```',
      'There are more columns.',
    ].join('\n\n');
    const expected = [
      '1. The from-file line is changed.\n2. The chunk header is modified. The change is similar to the change in the index header:',
      '```\n@@@ <from-file-range> <to-file-range> @@@\n```',
    ].join('\n\n');
    expect(passageOf(text, '1. The from-file')).toBe(expected);
    expect(passageOf(text, '```')).toBe(expected);
    // A list that does not end on a colon announces nothing.
    const plain = text.replace('index header:', 'index header.');
    expect(passageOf(plain, '1. The from-file')).toBe(
      '1. The from-file line is changed.\n2. The chunk header is modified. The change is similar to the change in the index header.',
    );
  });

  it('brings the nested list the index cut off from the item that announces it, under the same headings', () => {
    const lead = '2. Splitting a project into several repositories. This overcomes limits of finer grained access:';
    const nested = '- Size of the repository: large binary assets.\n- Access control: read/write policies.';
    const text = `${lead}\n\n${nested}`;
    // In the document the nested list is indented: the index's second passage starts 7 characters
    // after the first ends (a blank line and its indentation, which the index left out).
    const cut = (headings: string) =>
      source(text, [
        { at: 0, start: 100, headings },
        { at: lead.length + 2, start: 100 + lead.length + 7, headings: 'Page › DESCRIPTION' },
      ]);
    const quoted = (page: SourceText) => {
      const blocks = blocksOf(page);
      const run = passageAround(blocks, 0)!;
      return text.slice(blocks[run.first]!.start, blocks[run.last]!.end);
    };
    expect(quoted(cut('Page › DESCRIPTION'))).toBe(text);
    // Under other headings, seven characters may be a heading the index dropped: not one run.
    expect(quoted(cut('Page › SYNOPSIS'))).toBe(lead);
  });

  it('quotes a paragraph that leans on the one before with it, never alone', () => {
    const text = [
      '## Modes',
      'In serialized mode, one connection may be shared by many threads.',
      'This means that the connection does its own locking.',
    ].join('\n\n');
    expect(passageOf(text, 'This means')).toBe(
      'In serialized mode, one connection may be shared by many threads.\n\nThis means that the connection does its own locking.',
    );
    // The first stands alone (it leans on nothing; what follows only goes on).
    expect(passageOf(text, 'In serialized mode')).toBe(
      'In serialized mode, one connection may be shared by many threads.',
    );
  });

  it('brings a code block’s callout list, and offers a small section whole', () => {
    const text = [
      '##### Undo a commit and redo',
      '```\n$ git reset --soft HEAD^      <1>\n$ edit                        <2>\n```',
      '1. Leaves the working tree as it was.\n2. Make corrections.',
    ].join('\n\n');
    const page = source(text);
    const passages = passagesOf(page);
    expect(passages.map((passage) => passage.text)).toContain(text.slice(text.indexOf('```')));
    expect(passages.some((passage) => passage.wholeSection)).toBe(true);
  });

  it('reads a paragraph the index cut in two as one block, as the document has it', () => {
    const first = 'The first half of a long paragraph ends with a sentence.';
    const second = 'The second half goes on.';
    const text = `${first}\n\n${second}`;
    const page = source(text, [
      { at: 0, start: 100, headings: 'Part' },
      { at: first.length + 2, start: 100 + first.length + 1, headings: 'Part' },
    ]);
    const blocks = blocksOf(page);
    expect(blocks.map((block) => block.text)).toEqual([`${first} ${second}`]);
    expect(passagesOf(page)[0]!.text).toBe(`${first} ${second}`);
  });

  it('reads a code block the index cut in two as one block: its second part, without a fence, is code', () => {
    // Python's itertools recipes: the index cut the recipes' code block after a line ending on a colon.
    const first = '```\ndef take(n, iterable):\n    return list(islice(iterable, n))\n\ndef batched(iterable, n):';
    const second = "    # batched('ABCDEFG', 3) --> ABC DEF G\n    it = iter(iterable)\n```";
    const after = 'The recipes show the tools combined.';
    const text = `${first}\n\n${second}\n\n${after}`;
    const page = source(text, [
      { at: 0, start: 100, headings: 'Recipes' },
      { at: first.length + 2, start: 100 + first.length + 1, headings: 'Recipes' },
    ]);
    const blocks = blocksOf(page);
    expect(blocks.map((block) => block.kind)).toEqual(['code', 'paragraph']);
    expect(blocks[0]!.text).toBe(`${first}\n${second}`);
    expect(blocks.some((block) => block.text.startsWith('    # batched'))).toBe(false);
    expect(passagesOf(page).every((passage) => !passage.text.endsWith('def batched(iterable, n):'))).toBe(true);
  });

  it('never runs a passage across a gap between the parts of a document that were read', () => {
    const first = 'The first part ends here with a lead-in:';
    const second = '```\ncode from much later\n```';
    const text = `${first}\n\n${second}`;
    const page = source(text, [
      { at: 0, start: 0, headings: 'Part' },
      { at: first.length + 2, start: 5000, headings: 'Part' },
    ]);
    const blocks = blocksOf(page);
    const run = passageAround(blocks, 0);
    expect(run).toEqual({ first: 0, last: 0 });
  });
});
