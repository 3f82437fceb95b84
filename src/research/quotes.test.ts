import { describe, expect, it } from 'vitest';
import { locateQuote, verifyNote } from './quotes.ts';
import type { Note, SourceText } from './research-types.ts';

describe('quotes', () => {
  const text = 'Intro line.\nThe “La Rance” station   opened in\n1966 — the first of its kind.';

  it('finds a quote exactly, then ignoring case, white space and typographic quotes', () => {
    expect(locateQuote(text, 'Intro line.')).toEqual({ start: 0, end: 11 });
    const loose = locateQuote(text, 'the "la rance" station opened in 1966 - the first of its kind');
    expect(loose).not.toBeNull();
    expect(text.slice(loose!.start, loose!.end)).toBe(
      'The “La Rance” station   opened in\n1966 — the first of its kind',
    );
    expect(locateQuote(text, 'The station opened in 1967')).toBeNull();
    expect(locateQuote(text, 'short')).toBeNull();
  });

  it('marks a note verified with offsets in the document, or unverified when its quote is not there', () => {
    const source: SourceText = {
      url: 'file:///x',
      title: 'x',
      text,
      offset: 500,
      query: 'q',
      provider: 'local',
      fetched: true,
      segments: [
        { at: 0, start: 100, headings: '' },
        { at: 12, start: 900, headings: 'History' },
      ],
    };
    const base: Note = { id: 'n', url: source.url, title: 'x', text: 'opened 1966', query: 'q', iteration: 1 };
    const found = verifyNote({ ...base, quote: 'station opened in 1966' }, source);
    expect(found).toMatchObject({
      verified: true,
      quote: 'station   opened in\n1966',
      start: 900 + text.indexOf('station') - 12,
    });
    expect(verifyNote({ ...base, quote: 'It opened in 1999 to great acclaim.' }, source)).toMatchObject({
      verified: false,
    });
    expect(verifyNote({ ...base, quote: 'It opened in 1999 to great acclaim.' }, source).start).toBeUndefined();
  });
});
