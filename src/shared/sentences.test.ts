import { describe, expect, it } from 'vitest';
import { sentenceSpans, splitSentences } from './sentences.ts';

describe('splitting sentences (issue 42)', () => {
  it('never ends a sentence at the dot of .PHONY, e.g., 3.7 or foo.c', () => {
    const text =
      'Declare the target as .PHONY so make runs it every time. Python 3.7 and later, e.g. on Debian, compile foo.c into foo.o for you. The end.';
    expect(splitSentences(text)).toEqual([
      'Declare the target as .PHONY so make runs it every time.',
      'Python 3.7 and later, e.g. on Debian, compile foo.c into foo.o for you.',
      'The end.',
    ]);
  });

  it('ends a sentence after a symbol that closes it, and never inside a code span or after an initial', () => {
    expect(splitSentences('List it in .PHONY. Then run make. Call `a. B` now. J. Smith wrote it.')).toEqual([
      'List it in .PHONY.',
      'Then run make.',
      'Call `a. B` now.',
      'J. Smith wrote it.',
    ]);
  });

  it('keeps offsets into the text', () => {
    const text = '  First one.   Second one!  ';
    for (const span of sentenceSpans(text)) expect(text.slice(span.start, span.end)).toBe(span.text);
  });
});
