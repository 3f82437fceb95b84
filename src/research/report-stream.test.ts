import { describe, expect, it } from 'vitest';
import { StreamedText } from '../shared/streamed-text.ts';
import { applyCitationOrder, citationOrder } from './citations.ts';
import { CitationStream, renumberDraft } from './report-stream.ts';

const drafts = [
  '  Tidal barrages hold water [3]. Turbines turn as it falls [1, 3].\n\nLa Rance opened in 1966 [2].  ',
  'A claim with an unknown source [9] and a known one [2]. Brackets [like these] stay; so does [12a].',
  '[4] opens the text, [4] repeats, and [2,4] lists.\n',
  'No markers at all, only text that ends with a bracket [',
  'Markers everywhere[1][2] [ 3 ] [1 ,  2] end [2]',
  '   \n  ',
];
const urls = new Map([1, 2, 3, 4].map((number) => [number, `https://example.org/${number}`]));
const known = (number: number) => urls.has(number);

/** A deterministic sequence of cut points for a text (a small linear congruential generator). */
function cuts(length: number, seed: number): number[] {
  const points: number[] = [];
  let state = seed;
  for (let at = 0; at < length; ) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    at += 1 + (state % 7);
    points.push(Math.min(at, length));
  }
  return points;
}

describe('streamed report text', () => {
  it('renumbers a draft streamed in any pieces exactly as the whole draft at once', () => {
    for (const draft of drafts) {
      // What the whole-text functions make of it: first-citation order, unknown numbers removed.
      const trimmed = draft.trim();
      const expected = applyCitationOrder(trimmed, citationOrder(trimmed, urls));
      expect(renumberDraft(draft, new Map(), known)).toBe(expected);
      for (let seed = 1; seed <= 40; seed++) {
        const stream = new CitationStream(new Map(), known);
        let out = '';
        let from = 0;
        for (const to of cuts(draft.length, seed)) {
          out += stream.push(draft.slice(from, to));
          from = to;
        }
        out += stream.end();
        expect(out, `${JSON.stringify(draft)} cut by seed ${seed}`).toBe(expected);
      }
    }
  });

  it('continues numbering across sections, and a retried section starts from where it began', () => {
    const order = new Map<number, number>();
    expect(renumberDraft('First [3] then [1].', order, known)).toBe('First [1] then [2].');
    const before = new Map(order);
    expect(renumberDraft('Again [1], new [4].', new Map(before), known)).toBe('Again [2], new [3].');
    expect(renumberDraft('Again [1], new [4].', order, known)).toBe('Again [2], new [3].');
    expect([...order.entries()]).toEqual([
      [3, 1],
      [1, 2],
      [4, 3],
    ]);
  });

  it('assembles streamed pieces in order, a restarted piece replacing its first attempt', () => {
    const text = new StreamedText();
    text.apply({ key: 'write/section-0', offset: 0, text: '# T\n\n## A\n\n' });
    text.apply({ key: 'write/section-0', offset: 11, text: 'First.\n' });
    text.apply({ key: 'write/section-1', offset: 0, text: '\n## B\n\nPart' });
    // The step restarted after a crash: its new text replaces what the first attempt sent.
    text.apply({ key: 'write/section-1', offset: 0, text: '\n## B\n\nWhole' });
    expect(text.apply({ key: 'write/section-1', offset: 99, text: 'gap' })).toBe(false);
    expect(text.text).toBe('# T\n\n## A\n\nFirst.\n\n## B\n\nWhole');
  });
});
