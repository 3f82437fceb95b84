import { describe, expect, it } from 'vitest';
import { stem, stems, stopWords } from '../../shared/terms.ts';
import { fieldCounts } from './field-counts.ts';

/** What fieldCounts computes, written plainly: every word a string, every word looked up. */
function reference(text: string, query: readonly string[]): { counts: Map<string, number>; length: number } {
  const counts = new Map<string, number>();
  const lower = text.toLowerCase();
  const prefixes = new Set(query.map((term) => term.slice(0, 3)));
  let length = 0;
  for (const word of lower.match(/[\p{L}\p{N}_]+/gu) ?? []) {
    if (word.length < 2 || stopWords.has(word)) continue;
    length += 1;
    if (!prefixes.has(word.slice(0, 3))) continue;
    const term = stem(word);
    if (query.includes(term)) counts.set(term, (counts.get(term) ?? 0) + 1);
  }
  if (lower.includes('`'))
    for (const term of stems(text))
      if (stopWords.has(term) && query.includes(term)) counts.set(term, (counts.get(term) ?? 0) + 1);
  return { counts, length };
}

const sorted = (counts: Map<string, number>) => [...counts].sort(([a], [b]) => a.localeCompare(b));

/** A small seeded generator, so a failure names a text that can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('fieldCounts', () => {
  it('counts the query stems and content words of a field as a regex over every word would', () => {
    const text = 'The `with` statement sorts tuples; Sorting a tuple, sorted_items and SORTS: with is, of, _x a.';
    const query = ['sort', 'tupl', 'with'];
    expect(sorted(fieldCounts(text, query).counts)).toEqual(sorted(reference(text, query).counts));
    expect(fieldCounts(text, query)).toEqual(reference(text, query));
    // sorts, Sorting, SORTS (not sorted_items: one word, stemmed whole).
    expect(fieldCounts(text, query).counts.get('sort')).toBe(3);
  });

  it('agrees with the plain version on texts of every script, marks, digits, emoji and code', () => {
    const pieces = [
      'the',
      'and',
      'with',
      'is',
      'of',
      'to',
      'a',
      'I',
      'x',
      '_',
      '__init__',
      'sort',
      'sorting',
      'Sorted',
      'tuples',
      'tuple',
      'indentation',
      'indent',
      'résumé',
      'Ärger',
      'İstanbul',
      'straße',
      'ǅemal',
      'naïve',
      'e\u0301t\u00e9',
      'Ωmega',
      'привет',
      'данные',
      '数据库',
      '日本語',
      '𝐀𝐁𝐂',
      '𝟙𝟚',
      '😀',
      'x²',
      '٣٤',
      '½',
      '`with`',
      '`is`',
      '`for x in y`',
      'json.dumps(obj)',
      "it's",
      'don’t',
      '—',
      '…',
      '\n',
      '  ',
      '.',
      ',',
      '-',
      '#',
    ];
    const queries = [['sort', 'tupl'], ['with', 'indent'], ['résumé', 'данн'], ['数据库'], ['𝐀𝐁𝐂', 'x'], ['is', 'for']];
    const next = random(7);
    for (let round = 0; round < 3_000; round++) {
      const pick = (from: string[]) => from[Math.floor(next() * from.length)]!;
      const words = Array.from({ length: 1 + Math.floor(next() * 30) }, () => pick(pieces));
      const separator = () => pick([' ', '', ', ', '\n', '_', '·']);
      const text = words.map((word) => word + separator()).join('');
      const query = queries[round % queries.length]!.map(stem);
      const expected = reference(text, query);
      const actual = fieldCounts(text, query);
      expect({ text, length: actual.length, counts: sorted(actual.counts) }).toEqual({
        text,
        length: expected.length,
        counts: sorted(expected.counts),
      });
    }
  });
});
