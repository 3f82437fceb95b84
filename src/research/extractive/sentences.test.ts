import { describe, expect, it } from 'vitest';
import { markdownWithoutLinkUrls } from '../../providers/extract/extracted-document.ts';
import { isProse, sentences } from './sentences.ts';

const texts = (text: string) => sentences(text).map((sentence) => sentence.text);

describe('sentences', () => {
  it('never splits inside a code span, after an abbreviation or an initial, and keeps offsets', () => {
    const text =
      'Call `os.path.join(a, b). Then` returns a path, e.g. a file name in a folder. Dr. J. Smith wrote the module in 1998 for the team. It is still used today by many people.';
    expect(texts(text)).toEqual([
      'Call `os.path.join(a, b). Then` returns a path, e.g. a file name in a folder.',
      'Dr. J. Smith wrote the module in 1998 for the team.',
      // "It" leans on the sentence before it: the two are one quote, never "It…" alone (issue 31).
      'Dr. J. Smith wrote the module in 1998 for the team. It is still used today by many people.',
    ]);
    for (const sentence of sentences(text)) expect(text.slice(sentence.start, sentence.end)).toBe(sentence.text);
  });

  it('never quotes a sentence that leans on the one before it alone (issue 31)', () => {
    // The false statement of issue 31: two true sentences of different paragraphs made one claim.
    const text = [
      'The default threading mode of the library is called serialized mode.',
      '## Multi-thread',
      'This means multiple threads can safely use the same connection.',
      '## Temporary files',
      'This module creates temporary files and directories.',
      'In multi-thread mode, a database connection must not be used in two threads at once.',
      'These restrictions apply to prepared statements too. It is checked at run time.',
    ].join('\n\n');
    // A leaning sentence with nothing before it in its paragraph is left out, and so is one leaning on it.
    // A sentence that points back at the heading it opens the section of stands.
    expect(texts(text)).toEqual([
      'The default threading mode of the library is called serialized mode.',
      'This module creates temporary files and directories.',
      'In multi-thread mode, a database connection must not be used in two threads at once.',
    ]);
    for (const sentence of sentences(text)) expect(text.slice(sentence.start, sentence.end)).toBe(sentence.text);
  });

  it('quotes a lead-in only with the code block or list it introduces (issue 31)', () => {
    const text = [
      'To rebuild the index while writes continue, use a command similar to the following:',
      '```\nREINDEX INDEX CONCURRENTLY my_index;\n```',
      'The server accepts these options as follows:',
      '- `fast` skips the checks\n- `full` checks every page',
      'Run the check with the verbose flag, and compare the output with the following:',
      'Nothing of the output is shown here, and the page goes on about something else entirely.',
    ].join('\n\n');
    const units = sentences(text);
    const reindex = units.find((unit) => unit.text.startsWith('To rebuild the index'));
    expect(reindex?.follows).toBe('```\nREINDEX INDEX CONCURRENTLY my_index;\n```');
    const options = units.find((unit) => unit.text.startsWith('The server accepts'));
    expect(options?.follows).toBe('- `fast` skips the checks\n- `full` checks every page');
    expect(units.some((unit) => unit.text.startsWith('Run the check with the verbose flag'))).toBe(false);
    for (const unit of units) expect(text.slice(unit.start, unit.end)).toContain(unit.text);
  });

  it('keeps a numbered heading or list label whole instead of ending a sentence after its number', () => {
    expect(texts('27.2. Log-Shipping Standby Servers keep a copy of the primary in sync with it.')).toEqual([
      '27.2. Log-Shipping Standby Servers keep a copy of the primary in sync with it.',
    ]);
    expect(
      texts('## 27.2. Log-Shipping Standby Servers\n\nA standby server applies the log that the primary ships to it.'),
    ).toEqual(['A standby server applies the log that the primary ships to it.']);
  });

  it('reads links as their words, so their addresses and titles never cut a sentence', () => {
    const { text, linkRanges } = markdownWithoutLinkUrls(
      'See [the notes by J. Smith](notes.html#v2.1. "Release 2.1. Notes") for the details of the module. It is short but it is there.',
    );
    expect(texts(text)).toEqual([
      'See the notes by J. Smith for the details of the module.',
      'See the notes by J. Smith for the details of the module. It is short but it is there.',
    ]);
    expect(linkRanges.map(([start, end]) => text.slice(start, end))).toEqual(['the notes by J. Smith']);
  });

  it('leaves out headings, tables, code blocks, prompts and fragments', () => {
    const text = [
      '# A heading that looks like a sentence of its own.',
      '| Name | Aliases | Description of the thing in this row |',
      '```',
      'This line is code, even if it reads like a sentence of prose.',
      '```',
      '>>> print("this is a prompt with a few words in it")',
      'how many times to execute the statement in the loop',
      'Example:',
      'The only real sentence in this text is this one, and it says so.',
    ].join('\n\n');
    expect(texts(text)).toEqual(['The only real sentence in this text is this one, and it says so.']);
  });

  it('keeps a sentence that opens with a name its document writes as code, in lower case', () => {
    const text = [
      '# `asyncio` — Asynchronous I/O',
      'asyncio is a library to write concurrent code using the async/await syntax.',
      'returns the number of items in the queue when it is called',
    ].join('\n\n');
    expect(texts(text)).toEqual(['asyncio is a library to write concurrent code using the async/await syntax.']);
    expect(texts('asyncio is a library to write concurrent code using the async/await syntax.')).toEqual([]);
  });

  it('tells prose from code-like fragments', () => {
    expect(isProse('The json module can serialize objects to a string.')).toBe(true);
    expect(isProse('json.dumps(obj, *, skipkeys=False, ensure_ascii=True, indent=None)')).toBe(false);
    expect(isProse('`a` `b` `c` `d` `e` `f` is the list')).toBe(false);
    expect(isProse('To create a virtual environment, decide upon a directory and run the module:')).toBe(true);
    expect(isProse('Run it like this:')).toBe(false);
  });
});
