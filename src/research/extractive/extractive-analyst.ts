import type { Analyst, AnalystCall } from '../analyst.ts';
import {
  asksWhatChanged,
  coverage,
  definesSubject,
  markCode,
  mentionsSubject,
  profileQuestion,
  type QuestionProfile,
  selectDiverse,
  stems,
  tellsHow,
} from '../relevance.ts';
import type { ResearchSettings } from '../research-settings.ts';
import type { Note, Outline, OutlineSection, SourceText } from '../research-types.ts';
import { isCodeHeading, isReleaseNotes, lastHeading, namedBy, namesSubject, titledFor } from './headings.ts';
import { applyFeedback } from './outline-feedback.ts';
import { type Sentence, sentences } from './sentences.ts';

/** A local computation as an analyst call (no model, nothing to journal as a prompt). */
function local<T>(compute: () => T): AnalystCall<T> {
  return { model: null, run: async () => ({ output: compute() }) };
}

function shortTitle(question: string): string {
  const clean = question
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/[?.!]+$/, '');
  if (clean.length <= 80) return clean;
  return `${clean.slice(0, 80).replace(/\s+\S*$/, '')}…`;
}

/** Notes kept per source, and sentences per section, by report length. */
const sizes = {
  short: { overview: 2, sections: 2, perSection: 2 },
  medium: { overview: 3, sections: 4, perSection: 3 },
  long: { overview: 4, sections: 6, perSection: 4 },
} as const;

const NOTES_PER_SOURCE = 8;
/** The version notes documentation builders add (Sphinx's versionadded/versionchanged/deprecated). */
const VERSION_NOTE = /^(?:New|Added|Changed|Deprecated|Removed) (?:in|since) version \d/;
/** What a sentence's focus (the share of its words that are the question's) adds to its score. */
const FOCUS_WEIGHT = 0.2;
/**
 * What defining the subject adds to a source's claim to answer a "what is" question: a definition
 * is the answer such a question asks for, over a page that is titled for the subject but uses it.
 * A definition that opens a section named for the subject (a glossary entry) counts in full; a
 * sentence that only reads like one ("Python coroutines are awaitables…"), half.
 */
const DEFINITION_WEIGHT = 0.35;

function definitionWeight(profile: QuestionProfile, notes: readonly Note[]): number {
  const defining = notes.filter((note) => note.definition);
  if (defining.some((note) => namesSubject(profile, note.heading ?? ''))) return DEFINITION_WEIGHT;
  return defining.length > 0 ? DEFINITION_WEIGHT / 2 : 0;
}
/** What a release-notes page loses as the page to answer from, unless the question asks what changed. */
const HISTORY_PENALTY = 0.2;
/** What a sentence of a page's lead gains, times how well the page's title covers the question. */
const LEAD_WEIGHT = 0.3;
/** A section must reach this share of the best note's score to be written at all (drop, never pad). */
const SECTION_FLOOR = 0.5;
/**
 * A section's page must reach this share of the best page's score: a page that shares a word or two
 * with the question (a debugger's "temporary breakpoints" for a question about temporary files)
 * gives no section, however well one sentence of it scores.
 */
const SOURCE_FLOOR = 0.6;
/** A sentence must reach this share of the best note's score to be quoted. */
const NOTE_FLOOR = 0.4;

const noteStems = new WeakMap<Note, Set<string>>();
function termsOf(note: Note): Set<string> {
  let terms = noteStems.get(note);
  if (!terms) {
    terms = new Set(stems(note.text));
    noteStems.set(note, terms);
  }
  return terms;
}

/**
 * How well each sentence of a source answers the question, 0 to 1, comparable across sources: the
 * share of the question's weighted terms the sentence covers, helped by the terms its section's
 * headings and the page's title cover, a sentence that defines the subject of a "what is" question,
 * the first sentences of a section, and the search's own judgment of the source.
 */
function scoreSentences(
  profile: QuestionProfile,
  source: SourceText,
  candidates: Placed[],
  iteration: number,
): number[] {
  // The first searches ask the question itself; later ones follow leads, and their top hit counts less.
  const relevance = (source.relevance ?? 0.5) * (iteration === 1 ? 1 : 0.6);
  const contexts = new Map<string, number>();
  const score = (placed: Placed, text: string, opensSection: boolean): number => {
    const { headings } = placed;
    const words = new Set(stems(text));
    let own = coverage(profile, words);
    // The sentence that opens a section speaks of what the section's heading names (a glossary entry's
    // definition rarely repeats its term).
    const named = opensSection ? namedBy(profile, lastHeading(headings)) : 0;
    own = Math.max(own, named);
    if (own === 0) return 0;
    let context = contexts.get(headings);
    if (context === undefined) {
      context = coverage(profile, new Set(stems(`${source.title} ${headings}`)));
      contexts.set(headings, context);
    }
    // A sentence that is about little else ("Wait until the thread terminates.") answers more
    // directly than a long one that mentions the same words among many others.
    const focus = words.size ? [...words].filter((term) => profile.terms.includes(term)).length / words.size : 0;
    let total = 0.5 * own + 0.2 * context + 0.3 * relevance + FOCUS_WEIGHT * focus;
    if (isDefinition(profile, { ...placed, opensSection }, text) || tellsHow(profile, text)) total += 0.25;
    // The subject named whole ("the with statement", not "with" and "statement" apart).
    if (mentionsSubject(profile, text) || (opensSection && mentionsSubject(profile, lastHeading(headings)))) {
      total += 0.15;
    }
    if (opensSection) total += 0.05;
    // A lead says what its page or section is for ("The argparse module makes it easy to write
    // user-friendly command-line interfaces."): the page's lead (before its first section heading)
    // counts as much as the page's title is about the question, a section's first sentence as much
    // as its heading is.
    if (!headings.includes(' › ')) total += LEAD_WEIGHT * context;
    else if (opensSection) total += LEAD_WEIGHT * named;
    // A lead-in ("…, run the venv module as a script:") says how, but reads as a fragment.
    if (text.endsWith(':')) total -= 0.05;
    // A version note ("Changed in version 3.9: …") records history, not what something is or does.
    if (VERSION_NOTE.test(text)) total -= 0.3;
    return total;
  };
  return candidates.map((placed) => {
    const { sentence } = placed;
    if (sentence.joined === undefined) return score(placed, sentence.text, placed.opensSection);
    // A pair is quoted for its second sentence, which cannot stand alone: it scores as that sentence
    // would, and yields to its first sentence alone when that one answers at least as well.
    const first = score(placed, sentence.text.slice(0, sentence.joined), placed.opensSection);
    const second = score(placed, sentence.text.slice(sentence.joined), false);
    return second > first ? second : first - 0.001;
  });
}

/**
 * True when the sentence defines what a "what is" question asks about: it says so ("A decorator is
 * …"), or it opens a section named exactly that (a glossary entry: "decorator — A function returning
 * another function…").
 */
function isDefinition(profile: QuestionProfile, placed: Placed, text = placed.sentence.text): boolean {
  if (profile.kind !== 'definition') return false;
  if (definesSubject(profile, text)) return true;
  return placed.opensSection && namesSubject(profile, lastHeading(placed.headings));
}

/** A sentence placed in its source: its offset in the document, its section, and whether it opens it. */
interface Placed {
  sentence: Sentence;
  start: number;
  end: number;
  headings: string;
  opensSection: boolean;
}

/**
 * Maps sentences of a source's text to document offsets and sections, through its segments and the
 * heading lines inside them (a glossary entry within a passage is a section of its own).
 */
function place(source: SourceText, found: Sentence[]): Placed[] {
  const segments = source.segments ?? [{ at: 0, start: source.offset, headings: source.headings ?? '' }];
  const headingLines = [...source.text.matchAll(/^(#{1,6})\s+(.+?)\s*#*$/gm)].map((match) => ({
    at: match.index!,
    text: match[2]!.replace(/`/g, '').trim(),
  }));
  const opened = new Set<string>();
  return found.map((sentence) => {
    let index = 0;
    for (let at = 0; at < segments.length; at++) if (segments[at]!.at <= sentence.start) index = at;
    const segment = segments[index]!;
    const segmentEnd = segments[index + 1]?.at ?? source.text.length;
    const inner = headingLines.findLast(
      (line) => line.at >= segment.at && line.at < sentence.start && line.at < segmentEnd,
    );
    // The segment's own first heading line is already the last part of its path.
    const headings =
      inner && !segment.headings.endsWith(inner.text)
        ? `${segment.headings ? `${segment.headings} › ` : ''}${inner.text}`
        : segment.headings;
    const section = `${index}\u0000${inner?.at ?? -1}`;
    const opensSection = !opened.has(section);
    opened.add(section);
    return {
      sentence,
      start: segment.start + (sentence.start - segment.at),
      end: segment.start + (sentence.end - segment.at),
      headings,
      opensSection,
    };
  });
}

/**
 * Research without a language model: queries from the question (and, later, from the headings of
 * the best sources found), query-focused sentence selection with a relevance floor, an overview made
 * of the sentences that best answer the question from the best source, and sections per aspect
 * (the sources' own sections). Every sentence is quoted verbatim from its cited passage.
 * Deterministic: the same question over the same corpus gives the same report.
 */
export class ExtractiveAnalyst implements Analyst {
  readonly name = 'extractive';
  readonly usesModel = false;

  title(question: string, _settings: ResearchSettings) {
    return local(() => shortTitle(question));
  }

  plan({ question, settings }: { question: string; settings: ResearchSettings }) {
    return local(() => {
      const profile = profileQuestion(question);
      // Words the question uses as code names keep their backticks, so the search keeps them too.
      const words =
        markCode(question)
          .toLowerCase()
          .match(/`[^`\n]+`|[\p{L}\p{N}_.-]+/gu) ?? [];
      // Each content word once ("line by line" is one "line").
      const content = [
        ...new Map(
          words.filter((word) => profile.terms.includes(stemWord(word))).map((word) => [stemWord(word), word]),
        ).values(),
      ];
      const candidates = [content.join(' ') || question.trim()];
      // Each subject of a comparison or definition on its own, then the heaviest terms together.
      for (const subject of profile.subjects) candidates.push(subject);
      const heaviest = [...content].sort(
        (a, b) => (profile.weights.get(stemWord(b)) ?? 1) - (profile.weights.get(stemWord(a)) ?? 1),
      );
      if (heaviest.length > 2) candidates.push(heaviest.slice(0, 2).join(' '));
      const queries: string[] = [];
      for (const query of candidates) if (isNewQuery(query, queries, profile.terms.length)) queries.push(query.trim());
      return { queries: queries.slice(0, settings.queriesPerIteration) };
    });
  }

  takeNotes({ question, source, iteration, idPrefix }: Parameters<Analyst['takeNotes']>[0]) {
    return local((): Note[] => {
      const profile = profileQuestion(question);
      const candidates = place(source, sentences(source.text));
      const scores = scoreSentences(profile, source, candidates, iteration);
      const ranked = candidates
        .map((placed, index) => ({ placed, score: scores[index]!, index }))
        .filter((entry) => entry.score > 0);
      const chosen = withoutOverlaps(
        selectDiverse(
          ranked,
          NOTES_PER_SOURCE,
          (entry) => entry.score,
          (entry) => new Set(stems(entry.placed.sentence.text)),
        ),
      ).sort((a, b) => a.index - b.index);
      return chosen.map(({ placed, score }, index) => {
        const heading = lastHeading(placed.headings);
        return {
          id: `${idPrefix}-${index}`,
          url: source.url,
          title: source.title,
          text: placed.sentence.text,
          start: placed.start,
          end: placed.end,
          query: source.query,
          iteration,
          score: Number(score.toFixed(4)),
          ...(heading ? { heading } : {}),
          ...(source.lead !== undefined ? { lead: source.lead } : {}),
          ...(placed.sentence.follows ? { follows: placed.sentence.follows } : {}),
          ...(placed.sentence.joined !== undefined ? { joined: placed.sentence.joined } : {}),
          ...(isDefinition(profile, placed) ? { definition: true } : {}),
          // The note is the source's own sentence, placed by its offsets.
          verified: true,
        };
      });
    });
  }

  analyze({ question, notes, newNotes, iteration, asked, settings }: Parameters<Analyst['analyze']>[0]) {
    return local(() => {
      if (iteration >= settings.maxIterations)
        return { done: true, reason: 'iteration limit reached', nextQueries: [] };
      const best = Math.max(0, ...notes.map((note) => note.score ?? 0));
      const useful = newNotes.filter((note) => (note.score ?? 0) >= best * NOTE_FLOOR);
      if (useful.length === 0)
        return { done: true, reason: 'the last searches found nothing relevant', nextQueries: [] };
      const known = new Set(notes.filter((note) => !newNotes.includes(note)).flatMap((note) => [...termsOf(note)]));
      const fresh = new Set(useful.flatMap((note) => [...termsOf(note)]).filter((term) => !known.has(term)));
      if (iteration > 1 && fresh.size < 5) {
        return { done: true, reason: `little new material (${fresh.size} new terms)`, nextQueries: [] };
      }
      // A sentence that names the subject and covers the question, from a top result: answered.
      const answered = useful.some((note) => (note.score ?? 0) >= 0.9 && note.definition);
      if (answered) return { done: true, reason: 'a top source defines what the question asks about', nextQueries: [] };
      // Pseudo-relevance feedback (RM3): the words the best passages use most, beyond the question's,
      // are the documents' own words for what it asks; each next query is the question's core terms
      // with some of them.
      const profile = profileQuestion(question);
      const surface = new Map<string, string>();
      for (const word of markCode(question)
        .toLowerCase()
        .match(/`[^`\n]+`|[\p{L}\p{N}_]+/gu) ?? []) {
        if (!surface.has(stemWord(word))) surface.set(stemWord(word), word);
      }
      const core = [...profile.terms]
        .sort((a, b) => (profile.weights.get(b) ?? 1) - (profile.weights.get(a) ?? 1))
        .slice(0, 2)
        .map((term) => surface.get(term) ?? term);
      const expansion = feedbackTerms(useful, profile.terms);
      const feedback: string[] = [];
      for (let at = 0; at + 1 < expansion.length && feedback.length < settings.queriesPerIteration; at += 2) {
        const query = [...core, ...expansion.slice(at, at + 2)].join(' ');
        if (isNewQuery(query, [...asked, ...feedback], 2)) feedback.push(query);
      }
      if (feedback.length === 0) return { done: true, reason: 'no new words to search for', nextQueries: [] };
      return {
        done: false,
        reason: `${fresh.size} new terms; searching the best passages' own words: ${expansion.slice(0, 4).join(', ')}`,
        nextQueries: feedback,
      };
    });
  }

  outline({ question, notes, settings, feedback, previous }: Parameters<Analyst['outline']>[0]) {
    return local((): Outline => {
      if (feedback && previous) return applyFeedback(previous, feedback, notes);
      return draftOutline(question, notes, settings);
    });
  }

  writeSection({ notes, citationFor, onDelta }: Parameters<Analyst['writeSection']>[0]) {
    return local(() => {
      const text = notes
        .map((note) => cited(note, citationFor))
        .join(' ')
        .replace(/ *\n\n+ */g, '\n\n')
        .trim();
      onDelta?.(text);
      return text;
    });
  }

  summarize({ notes, iteration }: Parameters<Analyst['summarize']>[0]) {
    return local(() => {
      const sources = new Set(notes.map((note) => note.url)).size;
      const best = [...notes].sort((a, b) => (b.score ?? 0) - (a.score ?? 0))[0];
      const count = `${notes.length} note${notes.length === 1 ? '' : 's'} from ${sources} source${sources === 1 ? '' : 's'} after iteration ${iteration}.`;
      return best ? `${count} Best match so far: "${best.text}" (${best.title}).` : `${count} Nothing relevant yet.`;
    });
  }

  judgeClaims() {
    // No model: the lexical check alone decides.
    return null;
  }

  clarify() {
    // No model to judge a question ambiguous: research it as asked.
    return null;
  }

  assessFollowUp({ question, notes }: Parameters<Analyst['assessFollowUp']>[0]) {
    return local(() => {
      const profile = profileQuestion(question);
      const best = Math.max(0, ...notes.map((note) => coverage(profile, termsOf(note))));
      return best >= 0.6
        ? {
            action: 'answer' as const,
            reason: `a stored note covers ${Math.round(best * 100)}% of the question's terms`,
          }
        : {
            action: 'research' as const,
            reason: `the stored notes cover at most ${Math.round(best * 100)}% of the question's terms`,
          };
    });
  }

  answer({ question, notes, citationFor }: Parameters<Analyst['answer']>[0]) {
    return local(() => {
      const profile = profileQuestion(question);
      const ranked = notes
        .map((note) => ({ note, score: coverage(profile, termsOf(note)) + (note.score ?? 0) * 0.1 }))
        .filter((entry) => entry.score > 0.3);
      const best = selectDiverse(
        ranked,
        4,
        (entry) => entry.score,
        (entry) => termsOf(entry.note),
      );
      if (best.length === 0) return 'The sources gathered so far do not address this question.';
      return best
        .map(({ note }) => cited(note, citationFor))
        .join(' ')
        .replace(/ *\n\n+ */g, '\n\n')
        .trim();
    });
  }
}

/** The sentences a note quotes: one, or the two of a pair. */
function sentencesOf(note: Note): string[] {
  return note.joined === undefined ? [note.text] : [note.text.slice(0, note.joined), note.text.slice(note.joined)];
}

/**
 * A note as a sentence of the report: its words, its citation, a period (the note's own closing mark
 * goes). A lead-in comes with the code block or list it introduces, each list item cited.
 */
function cited(note: Note, citationFor: Record<string, number>): string {
  const number = citationFor[note.url];
  // Every sentence of a quote carries its citation (a quote may be two: one leaning on the other).
  const parts = sentencesOf(note);
  const sentence = parts.map((part) => `${part.trim().replace(/[.!?:]$/, '')} [${number}].`).join(' ');
  if (!note.follows) return sentence;
  const block = note.follows.startsWith('```')
    ? note.follows
    : note.follows
        .split('\n')
        .map((line) => (/^\s*(?:[-*+]|\d+[.)])\s/.test(line) ? `${line.replace(/[.;,]?\s*$/, '')} [${number}]` : line))
        .join('\n');
  return `\n\n${sentence}\n\n${block}\n\n`;
}

/**
 * Notes of a source that share no words: of a sentence and the pair it opens (with the sentence
 * leaning on it), the pair when both were chosen, since it says more; otherwise the better one.
 */
function withoutOverlaps<T extends { placed: Placed; score: number }>(entries: T[]): T[] {
  const kept: T[] = [];
  for (const entry of [...entries].sort((a, b) => b.score - a.score)) {
    const { start, end } = entry.placed;
    const overlap = kept.findIndex((other) => start < other.placed.end && other.placed.start < end);
    if (overlap === -1) kept.push(entry);
    else if (start <= kept[overlap]!.placed.start && end >= kept[overlap]!.placed.end) kept[overlap] = entry;
  }
  return kept;
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

/**
 * A query worth searching: at least two different words (one when the question has only one), no
 * word twice, and not the same words as a query asked before, in any order.
 */
export function isNewQuery(query: string, asked: readonly string[], minimumWords: number): boolean {
  const words = query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  if (new Set(words).size !== words.length) return false;
  if (new Set(words).size < Math.min(2, Math.max(1, minimumWords))) return false;
  const key = [...new Set(words)].sort().join(' ');
  return !asked.some(
    (other) => [...new Set(other.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])].sort().join(' ') === key,
  );
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

/**
 * The page the overview answers from: the best page of the run's first search that has something
 * relevant to quote. What the loop found later may add sections, never take the first citation from
 * the first search's best page (a page whose title merely shares a word with the question used to).
 * Without a first search to go by (a follow-up), the best page by its notes.
 */
function answeringSource(bySource: Map<string, Note[]>, scores: Map<string, number>): string {
  const led = [...bySource.entries()]
    .map(([url, members]) => ({ url, lead: Math.min(...members.map((note) => note.lead ?? Number.POSITIVE_INFINITY)) }))
    .filter((entry) => Number.isFinite(entry.lead))
    .sort((a, b) => a.lead - b.lead || a.url.localeCompare(b.url));
  if (led[0]) return led[0].url;
  return [...scores.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
}

/**
 * A heading that is an identifier, not words: a requirement id (`R-52032-06717`), an anchor, a call
 * signature (`os.cpus()`), a file name; a section is never titled by one.
 */
export function isIdentifierHeading(heading: string): boolean {
  const text = heading.trim();
  return (
    /^[A-Z]+-\d{3,}(?:-\d+)*/.test(text) ||
    /^#|^[\w.]+#[\w-]+$/.test(text) ||
    /^[\w.$]+\([^)]*\)\s*$/.test(text) ||
    /^[\w./-]+\.(?:html?|txt|md|rst)$/.test(text) ||
    !/\p{L}{3,}/u.test(text) ||
    isCodeHeading(text)
  );
}

/** A section's title: its heading, else its page's title, in words (never an identifier). */
function sectionTitleOf(note: Note): string {
  if (note.heading && note.heading !== note.title && !isIdentifierHeading(note.heading)) return note.heading;
  if (!isIdentifierHeading(note.title)) return note.title;
  return `More from ${note.title}`;
}

/**
 * The first outline: an overview of the sentences that best answer the question from the best
 * source (a definition first for "what is" questions), then one section per relevant section of the
 * sources, best first, each above the relevance floor. Nothing below the floor is written.
 */
function draftOutline(question: string, notes: readonly Note[], settings: ResearchSettings): Outline {
  const size = sizes[settings.reportLength];
  const title = shortTitle(question);
  const best = Math.max(0, ...notes.map((note) => note.score ?? 0));
  // A sentence met again (in a later iteration, or on another page that repeats it) counts once.
  // (By sentence: a pair and a sentence of it quoted alone from another read share one.)
  const seen = new Set<string>();
  const kept = new Set<Note>();
  for (const note of [...notes].sort((a, b) => (b.score ?? 0) - (a.score ?? 0))) {
    const keys = sentencesOf(note).map((sentence) =>
      sentence
        .toLowerCase()
        .replace(/[^\p{L}\p{N}]+/gu, ' ')
        .trim(),
    );
    if (keys.some((key) => seen.has(key)) || (note.score ?? 0) < best * NOTE_FLOOR || (note.score ?? 0) <= 0) continue;
    for (const key of keys) seen.add(key);
    kept.add(note);
  }
  const relevant = notes.filter((note) => kept.has(note));
  if (relevant.length === 0) return { title, sections: [] };
  // The best source: its best note, helped by its second best (a page that answers more than once).
  const bySource = new Map<string, Note[]>();
  for (const note of relevant) bySource.set(note.url, [...(bySource.get(note.url) ?? []), note]);
  // The page to answer from: its best notes, and how much its own title names the question (a page
  // about the subject over one that mentions it among many others, as release notes do).
  const profile = profileQuestion(question);
  const aboutHistory = asksWhatChanged(question);
  const sourceScore = (members: Note[]) => {
    const sorted = members.map((note) => note.score ?? 0).sort((a, b) => b - a);
    return (
      (sorted[0] ?? 0) +
      0.25 * (sorted[1] ?? 0) +
      0.3 * titledFor(profile, members[0]!.title) +
      definitionWeight(profile, members) -
      (!aboutHistory && isReleaseNotes(members[0]!.title) ? HISTORY_PENALTY : 0)
    );
  };
  const scores = new Map([...bySource.entries()].map(([url, members]) => [url, sourceScore(members)]));
  const bestUrl = answeringSource(bySource, scores);
  const bestScore = scores.get(bestUrl)!;
  const bestNotes = bySource.get(bestUrl)!;
  const overview = selectDiverse(
    [...bestNotes].sort((a, b) => Number(b.definition ?? false) - Number(a.definition ?? false)),
    size.overview,
    (note) => (note.score ?? 0) + (note.definition ? 0.3 : 0),
    termsOf,
  ).sort((a, b) => Number(b.definition ?? false) - Number(a.definition ?? false) || (a.start ?? 0) - (b.start ?? 0));
  const sections: OutlineSection[] = [
    { title: 'Overview', focus: `The answer to: ${question.trim()}`, noteIds: overview.map((note) => note.id) },
  ];
  const used = new Set(overview.map((note) => note.id));
  // Aspects: the sources' own sections, each written only when it is relevant enough.
  const aspects = new Map<string, Note[]>();
  for (const note of relevant) {
    if (used.has(note.id)) continue;
    const key = `${note.url}\u0000${note.heading ?? ''}`;
    aspects.set(key, [...(aspects.get(key) ?? []), note]);
  }
  const ranked = [...aspects.values()]
    .map((members) => ({ members, score: Math.max(...members.map((note) => note.score ?? 0)) }))
    // Relevant enough itself, from a page that is about the question nearly as much as the best one.
    .filter(
      (aspect) =>
        aspect.score >= best * SECTION_FLOOR && scores.get(aspect.members[0]!.url)! >= bestScore * SOURCE_FLOOR,
    )
    .sort((a, b) => b.score - a.score || a.members[0]!.id.localeCompare(b.members[0]!.id))
    .slice(0, size.sections);
  const titles = new Set(['overview']);
  for (const { members } of ranked) {
    const chosen = selectDiverse(
      [...members].sort((a, b) => (b.score ?? 0) - (a.score ?? 0)),
      size.perSection,
      (note) => note.score ?? 0,
      termsOf,
    ).sort((a, b) => (a.start ?? 0) - (b.start ?? 0));
    const first = members[0]!;
    let sectionTitle = sectionTitleOf(first);
    if (titles.has(sectionTitle.toLowerCase())) sectionTitle = `${sectionTitle} (${first.title})`;
    titles.add(sectionTitle.toLowerCase());
    sections.push({
      title: sectionTitle,
      focus: `What "${first.title}" says${first.heading ? ` under "${first.heading}"` : ''}.`,
      noteIds: chosen.map((note) => note.id),
    });
  }
  return { title, sections };
}
