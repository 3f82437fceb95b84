import { stem, stems, stopWords } from '../../shared/terms.ts';

type Trie = { end: boolean; next: (Trie | undefined)[] };

/**
 * The stop words as a trie over a–z, so a word is looked up where it stands, without a string. Built
 * on the first count: every command that opens a store loads this module, and few of them search.
 */
let stops: { trie: Trie; longest: number } | undefined;
function buildStops(): { trie: Trie; longest: number } {
  const root: Trie = { end: false, next: [] };
  for (const word of stopWords) {
    let node = root;
    for (let index = 0; index < word.length; index++) {
      const letter = word.charCodeAt(index) - 97;
      node.next[letter] ??= { end: false, next: [] };
      node = node.next[letter]!;
    }
    node.end = true;
  }
  return { trie: root, longest: Math.max(...[...stopWords].map((word) => word.length)) };
}

function isStopWord(text: string, start: number, end: number): boolean {
  stops ??= buildStops();
  if (end - start > stops.longest) return false;
  let node: Trie | undefined = stops.trie;
  for (let index = start; index < end && node; index++) {
    const letter = text.charCodeAt(index) - 97;
    node = letter >= 0 && letter < 26 ? node.next[letter] : undefined;
  }
  return node?.end ?? false;
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** UTF-16 units of the word character (letter, digit, underscore) at `index`, or 0 if none is there. */
function wordCharAt(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (code < 128) return (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 95 ? 1 : 0;
  const point = text.codePointAt(index)!;
  return LETTER_OR_DIGIT.test(String.fromCodePoint(point)) ? (point > 0xffff ? 2 : 1) : 0;
}

/**
 * How often each query stem occurs in a field, and the field's length in content words (words of
 * letters, digits and underscores, as `/[\p{L}\p{N}_]+/u` finds them, two UTF-16 units long or more and not
 * stop words). Words are found where they stand, and only those that start like a query stem are cut
 * out and stemmed (the stemmer only strips suffixes): ranking a few hundred candidate passages per
 * search then costs a scan of their text, not a string and a lookup per word.
 */
export function fieldCounts(text: string, query: readonly string[]): { counts: Map<string, number>; length: number } {
  const counts = new Map<string, number>();
  const lower = text.toLowerCase();
  const prefixes = [...new Set(query.map((term) => term.slice(0, 3)))];
  let length = 0;
  for (let index = 0; index < lower.length; ) {
    let size = wordCharAt(lower, index);
    if (size === 0) {
      index += 1;
      continue;
    }
    const start = index;
    while (size > 0) {
      index += size;
      size = index < lower.length ? wordCharAt(lower, index) : 0;
    }
    // Lengths in UTF-16 units, as the analysts' string lengths are.
    if (index - start < 2 || isStopWord(lower, start, index)) continue;
    length += 1;
    // Starts like a query stem: the same first three characters, or all of a shorter stem's.
    const near = prefixes.some(
      (prefix) => lower.startsWith(prefix, start) && (prefix.length === 3 || index - start === prefix.length),
    );
    if (!near) continue;
    const term = stem(lower.slice(start, index));
    if (query.includes(term)) counts.set(term, (counts.get(term) ?? 0) + 1);
  }
  // Stop words the text writes as code ("`with`") count as the stems() of the analysts count them:
  // only a query that asks for one (stemming all of a passage's words is most of a search's own time).
  if (lower.includes('`') && query.some((term) => stopWords.has(term)))
    for (const term of stems(text))
      if (stopWords.has(term) && query.includes(term)) counts.set(term, (counts.get(term) ?? 0) + 1);
  return { counts, length };
}
