import { describe, expect, it } from 'vitest';
import type { Note, Outline } from '../research-types.ts';
import { applyFeedback, parseFeedback } from './outline-feedback.ts';

const note = (id: string, text: string, heading?: string): Note => ({
  id,
  url: `file:///docs/${id}.md`,
  title: id,
  text,
  query: 'q',
  iteration: 1,
  score: 0.8,
  ...(heading ? { heading } : {}),
});

const notes = [
  note('a', 'A barrage holds the tide back behind a dam across an estuary.', 'Barrages'),
  note('b', 'Tidal stream turbines stand on the seabed in fast currents.', 'Tidal streams'),
  note('c', 'Operating costs of a barrage are low once it is built.', 'Costs'),
  note('d', 'The La Rance station opened in 1966 in France.', 'Barrages'),
];

const outline: Outline = {
  title: 'Tidal power',
  sections: [
    { title: 'Overview', focus: 'x', noteIds: ['a'] },
    { title: 'Tidal streams', focus: 'x', noteIds: ['b'] },
    { title: 'La Rance', focus: 'x', noteIds: ['d'] },
  ],
};

describe('outline feedback', () => {
  it('reads one command per clause', () => {
    expect(
      parseFeedback('drop "Tidal streams"; add costs\nrename La Rance to History, then more about barrage').map(
        (c) => c.kind,
      ),
    ).toEqual(['drop', 'add', 'rename', 'more']);
    expect(parseFeedback('ok, but focus on costs')).toMatchObject([{ kind: 'more', topic: 'costs' }]);
  });

  it('drops, adds, expands and renames sections from the notes it has', () => {
    const revised = applyFeedback(outline, 'drop tidal streams; add costs; rename La Rance to History', notes);
    expect(revised.sections.map((section) => section.title)).toEqual(['Overview', 'History', 'Costs']);
    expect(revised.sections.at(-1)!.noteIds).toEqual(['c']);
    expect(revised.feedback).toEqual({
      applied: ['dropped "Tidal streams"', 'added a section "Costs"', 'renamed "La Rance" to "History"'],
      notUnderstood: [],
    });
  });

  it('answers what it did not understand, and what it could not do, changing nothing for them', () => {
    const revised = applyFeedback(outline, 'make it punchier; drop the weather; add volcanoes', notes);
    expect(revised.sections).toEqual(outline.sections);
    expect(revised.feedback!.applied).toEqual([]);
    expect(revised.feedback!.notUnderstood).toEqual([
      expect.stringMatching(/^"make it punchier": not understood \(say "drop <section>"/),
      '"drop the weather": no section is called "weather"',
      '"add volcanoes": nothing in the sources read so far is about "volcanoes"',
    ]);
  });
});
