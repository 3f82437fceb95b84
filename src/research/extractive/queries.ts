import { symbolsOf } from '../../shared/terms.ts';
import { markCode, profileQuestion, type QuestionProfile, stems } from '../relevance.ts';
import type { Note } from '../research-types.ts';

/**
 * What research without a model searches for: the question's most distinctive terms as the user
 * wrote them (words, and symbols such as `$@`, `-F` or `10.0.0.1`), each subject of a definition or
 * comparison, the heaviest terms together; later, the question's core terms with the words the best
 * passages use (pseudo-relevance feedback). A question of any length gets at least one search.
 */

/** Most terms in one query: a pasted error message or code block is searched by its most distinctive terms. */
export const QUERY_TERMS = 8;

/**
 * Each term of the question with the form it is written in (a word lower-cased, with the backticks
 * of a code name; a symbol as typed): the stem or symbol term → its surface.
 */
export function surfaceTerms(question: string): Map<string, string> {
  const surface = new Map<string, string>();
  for (const { symbol, term } of symbolsOf(question)) if (!surface.has(term)) surface.set(term, symbol);
  for (const word of markCode(question)
    .toLowerCase()
    .match(/`[^`\n]+`|[\p{L}\p{N}_]+/gu) ?? []) {
    const term = stemWord(word);
    if (term && !surface.has(term)) surface.set(term, word);
  }
  return surface;
}

/** A line of pasted code or program output: indented, fenced, or more symbols than words. */
function isCodeLine(line: string): boolean {
  if (/^(?: {4}|\t)/.test(line)) return true;
  const words = line.match(/\p{L}{2,}/gu)?.length ?? 0;
  const marks = line.match(/[{}();=<>[\]$#]|=>|::/g)?.length ?? 0;
  return marks >= 3 && marks >= words;
}

/** A question without the code or output pasted into it (fenced blocks and code-like lines). */
export function proseOf(question: string): string {
  let fenced = false;
  return question
    .split('\n')
    .filter((line) => {
      if (line.trim().startsWith('```')) {
        fenced = !fenced;
        return false;
      }
      return !fenced && !isCodeLine(line);
    })
    .join('\n');
}

/**
 * The first searches: the question's most distinctive terms in the order written, each subject
 * alone, the two heaviest terms together. Never none: a question whose terms are all common words is searched as written.
 */
export function planQueries(question: string, count: number): string[] {
  // Pasted code or output is searched by the words around it: its names are the user's own.
  const prose = proseOf(question);
  const profile = profileQuestion(profileQuestion(prose).terms.length >= 2 ? prose : question);
  const surface = surfaceTerms(question);
  const weight = (term: string) => coreWeight(profile, term);
  // The heaviest terms (ties: the earlier), kept in the question's order.
  const heaviest = [...profile.terms]
    .map((term, index) => ({ term, index }))
    .sort((a, b) => weight(b.term) - weight(a.term) || a.index - b.index);
  const kept = new Set(heaviest.slice(0, QUERY_TERMS).map((entry) => entry.term));
  const main = profile.terms.filter((term) => kept.has(term)).map((term) => surface.get(term) ?? term);
  const candidates = [main.join(' ')];
  for (const subject of profile.subjects) candidates.push(subject);
  if (heaviest.length > 2)
    candidates.push(
      heaviest
        .slice(0, 2)
        .map((entry) => surface.get(entry.term) ?? entry.term)
        .join(' '),
    );
  const queries: string[] = [];
  for (const query of candidates.map((each) => each.trim()).filter(Boolean))
    if (isNewQuery(query, queries, profile.terms.length)) queries.push(query);
  if (queries.length === 0) queries.push(question.replace(/\s+/g, ' ').trim().slice(0, 300));
  return queries.slice(0, count);
}

/**
 * Words that say how a question asks, not what it asks about: "make sure", "let", "able", and the
 * forms of "get", "want", "need", "way" and "possible" that `profileQuestion` keeps ("gets", "wants",
 * "ways": it drops the bare words), matched by stem.
 * "How do I make sure no two rows have the same pair of values…" was searched as "columns make", and
 * "How do I make Django store times…" fed back as "make django …" in every later search.
 */
const framing = new Set(stems('make sure want need way get let able possible'));
const FRAMING_WEIGHT = 0.25;

/**
 * A question term's weight when its heaviest terms are chosen (the first searches' and every feedback
 * search's core): its weight in the question, a framing word's least, so it is a core term only when
 * the question has too few others, and the first left out of a long question's search.
 */
export function coreWeight(profile: QuestionProfile, term: string): number {
  return framing.has(term) ? FRAMING_WEIGHT : (profile.weights.get(term) ?? 1);
}

/** Most expansion words a round of feedback adds, best first. */
const FEEDBACK_TERMS = 6;
/** Passages pseudo-relevance feedback reads: the best notes. */
const FEEDBACK_NOTES = 10;

/**
 * RM3's relevance model over the best notes: each word weighs its share of a note's words, times
 * the note's score, summed over the notes; the question's own words, stop words, numbers and
 * words of one note only are left out. Returns surface words (as written), best first.
 */
export function feedbackTerms(notes: readonly Note[], questionTerms: readonly string[]): string[] {
  const best = [...notes].sort((a, b) => (b.score ?? 0) - (a.score ?? 0)).slice(0, FEEDBACK_NOTES);
  const weights = new Map<string, number>();
  const seenIn = new Map<string, number>();
  const forms = new Map<string, Map<string, number>>();
  for (const note of best) {
    const words = (note.text.toLowerCase().match(/[\p{L}][\p{L}\p{N}_]*/gu) ?? []).filter(
      (word) => word.length > 2 && !stopLike.has(word),
    );
    const counts = new Map<string, number>();
    for (const word of words) {
      const term = stemWord(word);
      if (!term || questionTerms.includes(term)) continue;
      counts.set(term, (counts.get(term) ?? 0) + 1);
      const variants = forms.get(term) ?? new Map<string, number>();
      variants.set(word, (variants.get(word) ?? 0) + 1);
      forms.set(term, variants);
    }
    for (const [term, count] of counts) {
      weights.set(term, (weights.get(term) ?? 0) + ((note.score ?? 0) * count) / Math.max(1, words.length));
      seenIn.set(term, (seenIn.get(term) ?? 0) + 1);
    }
  }
  return [...weights.entries()]
    .filter(([term]) => (seenIn.get(term) ?? 0) >= 2)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, FEEDBACK_TERMS)
    .map(([term]) => [...forms.get(term)!.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0]);
}

/** A query's words as a search reads them: white-space separated, without backticks, lower case. */
function queryTokens(query: string): string[] {
  return query.toLowerCase().replace(/`/g, '').split(/\s+/).filter(Boolean);
}

/**
 * A query worth searching: at least two different words (one when the question has only one), no
 * word twice, and not the same words as a query asked before, in any order. A word is what stands
 * between spaces: `192.168.1.1` is one, however many times its digits repeat.
 */
export function isNewQuery(query: string, asked: readonly string[], minimumWords: number): boolean {
  const words = queryTokens(query);
  if (new Set(words).size !== words.length) return false;
  if (new Set(words).size < Math.min(2, Math.max(1, minimumWords))) return false;
  const key = [...new Set(words)].sort().join(' ');
  return !asked.some((other) => [...new Set(queryTokens(other))].sort().join(' ') === key);
}

/** Words of headings that say nothing about a topic. */
const stopLike = new Set(
  'the and for with from module modules documentation chapter section part notes glossary introduction general terminology using overview reference tutorial guide api examples example howto index contents appendix author what new'.split(
    ' ',
  ),
);

/** The stem of one word, or "" for a stop word (unless written as code). */
function stemWord(word: string): string {
  return stems(word)[0] ?? '';
}

/** Terms a question may have and still lean on the conversation for its subject ("What does -f do?"). */
const TERSE_TERMS = 2;

/**
 * The first searches of a follow-up: a terse one ("What does -q do?") is searched with the subject of
 * the question before it ("What does git clean -n do?"), first, since that is what it asks about; then
 * its own searches. `conversation` is the windowed conversation ("User: …" and "Assistant: …" turns).
 */
export function planFollowUpQueries(question: string, conversation: string, count: number): string[] {
  const own = planQueries(question, count);
  // The last question before it that named a subject of its own.
  const earlier = [...conversation.matchAll(/^User: (.+)$/gm)]
    .map((match) => match[1]!.trim())
    .filter((text) => text !== question.trim() && profileQuestion(text).terms.length > TERSE_TERMS)
    .at(-1);
  if (!earlier || profileQuestion(question).terms.length > TERSE_TERMS) return own;
  const [together] = planQueries(`${question}\n${earlier}`, 1);
  if (!together || own.includes(together)) return own;
  return [together, ...own].slice(0, Math.max(1, count));
}
