import { describe, expect, it } from 'vitest';
import type { Note } from './research-types.ts';
import { FALLBACK_SECTION, groundOutline } from './section-notes.ts';

const note = (id: string, text: string): Note => ({ id, url: `u-${id}`, title: id, text, query: 'q', iteration: 1 });

describe('grounding an outline in notes', () => {
  const notes = [
    note('n1', 'Tidal barrages hold water behind a dam and release it through turbines.'),
    note('n2', 'The La Rance barrage in France opened in 1966.'),
    note('n3', 'Honeybees dance to show where flowers are.'),
  ];

  it('keeps known ids, fills a section without notes by ranking, and drops one nothing supports', () => {
    const { outline, filled, dropped } = groundOutline(
      {
        title: 'Tides',
        sections: [
          { title: 'History', focus: 'When La Rance opened', noteIds: ['n2', 'invented-7'] },
          { title: 'How barrages work', focus: 'Dams, water and turbines', noteIds: [] },
          { title: 'Costs', focus: 'What electricity from tides costs', noteIds: ['nope'] },
        ],
      },
      notes,
      'How do tidal barrages work?',
    );
    expect(outline.sections.map((section) => section.title)).toEqual(['History', 'How barrages work']);
    expect(outline.sections[0]!.noteIds).toEqual(['n2']);
    // The best match first; the note about bees matches nothing of it.
    expect(outline.sections[1]!.noteIds[0]).toBe('n1');
    expect(outline.sections[1]!.noteIds).not.toContain('n3');
    expect(filled).toEqual(['How barrages work']);
    expect(dropped).toEqual(['Costs']);
  });

  it('answers the question from the notes when no outlined section matches any of them', () => {
    const { outline, dropped } = groundOutline(
      { title: 'Tides', sections: [{ title: 'Volcanoes', focus: 'Lava and ash', noteIds: ['made-up'] }] },
      notes,
      'When did the La Rance barrage open?',
    );
    expect(dropped).toEqual(['Volcanoes']);
    expect(outline.sections).toMatchObject([{ title: FALLBACK_SECTION, focus: 'When did the La Rance barrage open?' }]);
    expect(outline.sections[0]!.noteIds[0]).toBe('n2');
    expect(outline.sections[0]!.noteIds).not.toContain('n3');
  });
});
