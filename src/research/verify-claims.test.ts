import { describe, expect, it } from 'vitest';
import type { Note } from './research-types.ts';
import { checkClaims, claimsTrailer, markClaims, settleClaims, splitClaims } from './verify-claims.ts';

const note = (url: string, quote: string, text = quote): Note => ({
  id: `${url}-${quote.length}`,
  url,
  title: url,
  text,
  quote,
  query: 'q',
  iteration: 1,
  verified: true,
});

const notes = [
  note('a', 'La Rance station in France, opened in 1966, was the first large tidal barrage.'),
  note('b', 'Tidal streams drive underwater turbines where currents are fast.', 'Invented: tides are made of cheese.'),
];
const urlByNumber = new Map([
  [1, 'a'],
  [2, 'b'],
]);

describe('claim verification', () => {
  it('splits prose into sentences, giving a marker after the full stop to the sentence before it', () => {
    const text =
      'First claim about barrages. [1] Second claim\nwrapped over lines [2].\n\n- A list item claim.\n\n```\ncode. Not a claim.\n```';
    expect(splitClaims(text)).toEqual([
      'First claim about barrages. [1]',
      'Second claim wrapped over lines [2].',
      'A list item claim.',
    ]);
  });

  it('tells supported, unsupported and uncited claims apart, recording unknown numbers', () => {
    const drafts = checkClaims(
      [
        {
          title: 'S',
          text: 'La Rance in France opened in 1966 as the first large tidal barrage [1]. Tides are made of cheese, say experts [2]. The barrage changed the estuary ecology forever. A bold claim about the moon and its influence [9].',
        },
      ],
      urlByNumber,
      notes,
    );
    expect(drafts.map((claim) => claim.verdict)).toEqual(['supported', 'unsupported', 'uncited', 'uncited']);
    // A note's paraphrase is no evidence: only its quote counts.
    expect(drafts[1]!.passages).toEqual([notes[1]!.quote]);
    expect(drafts[3]).toMatchObject({ citations: [], unknownCitations: [9] });
  });

  it('lets a model judge cited claims, but never rescues one that shares almost no words with its passages', () => {
    const drafts = checkClaims(
      [{ title: 'S', text: 'Fast currents turn submerged turbines [2]. The moon is a cheese wheel orbiting us [1].' }],
      urlByNumber,
      notes,
    );
    const judged = settleClaims(
      drafts,
      new Map([
        [0, { index: 0, supported: true, reason: 'paraphrase' }],
        [1, { index: 1, supported: true, reason: 'sure' }],
      ]),
      new Map([
        [2, 1],
        [1, 2],
      ]),
    );
    expect(judged.map((claim) => [claim.verdict, claim.citations])).toEqual([
      ['supported', [1]],
      ['unsupported', [2]],
    ]);
    expect(judged[0]!.claim).toBe('Fast currents turn submerged turbines [1].');
  });

  it('never calls a report without citations verified, and marks flagged claims in place', () => {
    const uncited = settleClaims(
      checkClaims([{ title: 'S', text: 'Tidal barrages hold water behind dams.' }], urlByNumber, notes),
      new Map(),
      new Map(),
    );
    expect(claimsTrailer({ name: 'm', usesModel: true }, uncited)).toContain('nothing in this report is verified');
    expect(claimsTrailer({ name: 'm', usesModel: true }, [])).toContain('nothing in this report is verified');
    const report = '# T\n\n## S\n\nTidal barrages hold\nwater behind dams.\n';
    expect(markClaims(report, uncited)).toContain('water behind dams. **[uncited]**');
  });
});
