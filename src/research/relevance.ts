import type { SearchResult } from '../providers/search/search-provider.ts';
import { compoundPairs, queryTerms, stem, stems, stopWords } from '../shared/terms.ts';

export { stem, stems };

/**
 * Query-focused relevance without a model: what a question asks about (its terms, weighted), what
 * kind of question it is, and how well a sentence, a heading or a title covers it.
 */

/** Words that ask rather than tell: left out of a question's terms. */
const askingWords = new Set(
  'i me my we our you your get use using used way ways want need like possible difference differences between explain tell show give something anything best'.split(
    ' ',
  ),
);

export type QuestionKind = 'definition' | 'comparison' | 'procedure' | 'other';

export interface QuestionProfile {
  /** Stems of the question's content words, in order. */
  terms: string[];
  /** Weight of each stem: rarer-looking words (long, technical, code-like) count more. */
  weights: Map<string, number>;
  kind: QuestionKind;
  /** What a definition or comparison question is about ("json", "jsonb"). */
  subjects: string[];
  /** Subjects as lower-case phrases, matched whole ("with statement", "named tuple"). */
  phrases: string[];
  /**
   * Neighbouring content words of the question, as written, that a text may write as one word ("time
   * zone": "timezone"; "file system": "filesystem").
   */
  compounds: [string, string][];
}

function termWeight(word: string, named: ReadonlySet<string>): number {
  let weight = 1;
  if (word.length >= 7) weight += 0.5;
  if (/[\d_]/.test(word) || named.has(word)) weight += 0.5;
  return weight;
}

/**
 * A subject without the words around it that do not name it: a trailing verb phrase ("the yield
 * keyword do in a function") and the setting ("a package in Python", "exceptions in my program").
 */
function withoutContext(named: string): string {
  return named
    .replace(/\s+(?:mean|means|do|does|stand for|stands for|refer to|return|returns)\b.*$/i, '')
    .replace(/\s+(?:in|for|with|on|inside|within)\s+(?:python|the|a|an|my|your|our|this|their)\b.*$/i, '')
    .trim();
}

/** Words before a noun that never name code ("an expression", "the statement"). */
const determiners = new Set('a an the this that these those each any some my your its their our no every'.split(' '));

/** Words that name code when they stand before one of these: "the with statement", "the is operator". */
const codeNouns = /\b([a-z]+)(?=\s+(?:statements?|keywords?|operators?|clauses?|loops?|expressions?|blocks?)\b)/gi;

/**
 * The question with the words it uses as code names written as code (between backticks), so they
 * count as terms though they are stop words elsewhere ("What does the `with` statement do?").
 */
export function markCode(question: string): string {
  return question.replace(codeNouns, (word: string) => {
    const lower = word.toLowerCase();
    return stopWords.has(lower) && !determiners.has(lower) ? `\`${word}\`` : word;
  });
}

/**
 * Words the question writes as names: in capitals (`EXPLAIN`, `ANALYZE`), as code (backticks), with
 * underscores or dots, or called (`setTimeout()`). They are what the question asks about, never
 * asking words, whatever they would mean in prose.
 */
function namedWords(question: string): Set<string> {
  const named = new Set<string>();
  for (const [, code] of question.matchAll(/`([^`\n]+)`/g))
    for (const word of code!.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []) named.add(word);
  for (const word of question.match(/[\p{L}\p{N}_.]+(?:\(\))?/gu) ?? []) {
    if (/^\p{Lu}[\p{Lu}\p{N}_]{2,}$/u.test(word) || /[_.]\p{L}|\(\)$/u.test(word))
      for (const part of word.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []) named.add(part);
  }
  return named;
}

/** The question's terms, their weights, its kind and subjects. */
export function profileQuestion(question: string): QuestionProfile {
  const text = markCode(question.trim());
  const lower = text.toLowerCase();
  const named = namedWords(text);
  const words = queryTerms(text).filter((word) => !askingWords.has(word) || named.has(word));
  const terms = [...new Set(words.map(stem))];
  const weights = new Map<string, number>();
  for (const word of words) weights.set(stem(word), Math.max(weights.get(stem(word)) ?? 0, termWeight(word, named)));
  let kind: QuestionKind = 'other';
  let subjects: string[] = [];
  const comparison =
    /difference(?:s)? between (.+?) and (.+?)[?.!]*$/i.exec(text) ??
    /(?:compare|comparing) (.+?) (?:and|with|to) (.+?)[?.!]*$/i.exec(text) ??
    /^(?:is|are|should i use) (.+?) (?:or|vs\.?|versus) (.+?)[?.!]*$/i.exec(text) ??
    /(.+?) (?:vs\.?|versus) (.+?)[?.!]*$/i.exec(text);
  const definition =
    /^(?:what(?:'s| is| are)|define|what does) (?:an? |the )?(.+?)(?: mean| do| stand for)?[?.!]*$/i.exec(text);
  if (comparison) {
    kind = 'comparison';
    // "between $* and $@ in a macro body": the setting is not part of the second subject.
    subjects = [comparison[1]!, comparison[2]!].map((subject) => withoutContext(subject.replace(/^(the|a|an) /i, '')));
  } else if (definition) {
    kind = 'definition';
    // "the walrus operator (assignment expression)": both names are the subject; what follows the
    // verb ("… do in a function") or names the setting ("… in Python") is not part of it.
    let named = withoutContext(definition[1]!);
    // "What does the dataclass decorator generate?": the last word is the verb, not the subject.
    const verbRead = /\s(?:mean|do|stand for)[?.!]*$/i.test(text);
    if (/^what does\b/i.test(text) && !verbRead && named === definition[1] && named.includes(' '))
      named = named.replace(/\s+\S+$/, '');
    subjects = [
      named.replace(/\(.*?\)/g, '').trim(),
      ...[...named.matchAll(/\((.+?)\)/g)].map((match) => match[1]!.trim()),
    ].filter(Boolean);
  } else if (/^(how|in what way|what steps)\b/.test(lower)) kind = 'procedure';
  // Subjects weigh most: they are what the answer must be about.
  for (const subject of subjects) for (const term of stems(subject)) weights.set(term, (weights.get(term) ?? 1) + 1);
  const phrases = subjects
    .map((subject) => subject.toLowerCase().replace(/\s+/g, ' ').trim())
    .filter((phrase) => phrase.includes(' ') || phrase.length > 2);
  return { terms, weights, kind, subjects, phrases, compounds: compoundPairs(text) };
}

/** Share (0 to 1) of the question's weighted terms that appear among `present`. */
export function coverage(profile: QuestionProfile, present: ReadonlySet<string>): number {
  let total = 0;
  let found = 0;
  for (const term of profile.terms) {
    const weight = profile.weights.get(term) ?? 1;
    total += weight;
    if (present.has(term)) found += weight;
  }
  return total === 0 ? 0 : found / total;
}

/** True when the text holds one of the subject phrases whole ("the with statement", "a named tuple"). */
export function mentionsSubject(profile: QuestionProfile, text: string): boolean {
  const lower = ` ${text.toLowerCase().replace(/[`*_]/g, '').replace(/\s+/g, ' ')} `;
  return profile.phrases.some((phrase) => lower.includes(` ${phrase} `) || lower.includes(` ${phrase}s `));
}

/** True when a sentence defines one of the subjects ("A decorator is a function…", "JSON data types are…"). */
export function definesSubject(profile: QuestionProfile, sentence: string): boolean {
  if (profile.subjects.length === 0) return false;
  const head = sentence.toLowerCase().slice(0, 160);
  return profile.subjects.some((subject) => {
    const subjectStems = stems(subject);
    if (subjectStems.length === 0) return false;
    // The subject opens the sentence ("A decorator is…", "The json and jsonb types are…"): the words
    // before the verb are the subject's, give or take two.
    const position = /\b(is|are|refers to|means|denotes|provides|is used|are used)\b/.exec(head);
    if (!position || position.index > 100) return false;
    const before = stems(head.slice(0, position.index));
    return subjectStems.every((term) => before.includes(term)) && before.length <= subjectStems.length + 2;
  });
}

/**
 * True when the sentence tells how to do what a "how do I" question asks: it opens with a purpose
 * that names the question ("To create a virtual environment, …", "For reading lines from a file, …").
 */
export function tellsHow(profile: QuestionProfile, sentence: string): boolean {
  if (profile.kind !== 'procedure') return false;
  const purpose = /^(?:To|For) ([^,:;]{3,80}),/.exec(sentence);
  return purpose !== null && coverage(profile, new Set(stems(purpose[1]!))) >= 0.6;
}

/** True when a question asks about versions or changes (release notes answer it as well as a reference). */
export function asksWhatChanged(question: string): boolean {
  return /\b(?:new|changed?|changes|version|versions|release|released|added|deprecated|removed|history)\b/i.test(
    question,
  );
}

/** Jaccard similarity of two sets of stems: how much two sentences repeat each other. */
export function similarity(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const item of a) if (b.has(item)) shared += 1;
  return shared / (a.size + b.size - shared);
}

/**
 * Maximal marginal relevance: picks up to `count` items, each time the one whose relevance, less
 * its similarity to what is already picked, is highest. Ties keep the input order (deterministic).
 */
export function selectDiverse<T>(
  items: readonly T[],
  count: number,
  relevance: (item: T) => number,
  terms: (item: T) => ReadonlySet<string>,
  lambda = 0.7,
): T[] {
  const chosen: T[] = [];
  const remaining = [...items];
  while (chosen.length < count && remaining.length > 0) {
    let bestIndex = 0;
    let bestValue = Number.NEGATIVE_INFINITY;
    remaining.forEach((item, index) => {
      const redundancy = Math.max(0, ...chosen.map((other) => similarity(terms(item), terms(other))));
      const value = lambda * relevance(item) - (1 - lambda) * redundancy;
      if (value > bestValue + 1e-12) {
        bestValue = value;
        bestIndex = index;
      }
    });
    const [picked] = remaining.splice(bestIndex, 1);
    // Near-copies of a chosen sentence are never worth a slot.
    if (chosen.some((other) => similarity(terms(picked!), terms(other)) > 0.8)) continue;
    chosen.push(picked!);
  }
  return chosen;
}

/** A search result's own score over the best of its search (1 for the best), or by rank when unscored. */
export function searchRelevance(results: readonly SearchResult[]): number[] {
  const scores = results.map((result) => Number((result.metadata as { score?: number } | undefined)?.score));
  const top = Math.max(0, ...scores.filter(Number.isFinite));
  return scores.map((score, rank) => (Number.isFinite(score) && top > 0 ? score / top : 1 / (rank + 1)));
}
