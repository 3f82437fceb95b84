import { namesCode, synonymStems } from '../../shared/terms.ts';
import { coverage, definesSubject, mentionsSubject, type QuestionProfile, stems } from '../relevance.ts';
import type { SourceText } from '../research-types.ts';
import { isStamp } from './block-ties.ts';
import { lastHeading, namedBy, namesSubject, titledFor } from './headings.ts';
import { type Block, PASSAGE_CHARS, type Passage, withoutCodeBlocks } from './passages.ts';

/**
 * How well each passage of a source answers a question, comparable across sources (about 0 to 1.5):
 * how much of the question it covers, each term weighted by how rare it is on the page (a word on
 * every block of the page tells its blocks apart no more than the page's title does), how close
 * together it holds the terms it has, how much its section's heading names the question, what a
 * question of its kind looks for (a definition, a command), and how far the search put the page.
 */

/** Weight of the heading path's coverage beside the passage's own words. */
const HEADING_WEIGHT = 0.35;
/** Weight of the terms standing close together (within `WINDOW` words). */
const PROXIMITY_WEIGHT = 0.25;
const WINDOW = 14;
/** What the search's judgment of the page adds (its relevance, 0 to 1). */
const SEARCH_WEIGHT = 0.2;
/** What a command for a "how do I" question adds, and a definition of what a "what is" question asks about. */
const KIND_WEIGHT = 0.15;
export const DEFINITION_WEIGHT = 0.3;
/**
 * What a page's lead (its text before its first section) gains, times how much the page's title is
 * about the question: a page about the subject says what the subject is first. A section's opening
 * passage gains as much as its heading names the question.
 */
const LEAD_WEIGHT = 0.45;
const OPENING_WEIGHT = 0.15;
/** What a note box quoted on its own keeps of its score: it qualifies the text before it. */
const LONE_NOTE = 0.85;
/** Passages longer than this many characters pay for their length. */
const CONCISE_CHARS = 700;
const LENGTH_PENALTY = 0.12;

/** Each question term's weight on this page: its weight in the question times its rarity among the page's blocks. */
function termWeights(profile: QuestionProfile, blocks: readonly Block[]): Map<string, number> {
  const quotable = blocks.filter((block) => block.kind !== 'heading');
  const count = Math.max(1, quotable.length);
  const present = quotable.map((block) => new Set(stems(block.text)));
  const weights = new Map<string, number>();
  for (const term of profile.terms) {
    const frequency = present.filter((words) => words.has(term)).length;
    // 1 for a word in one block of many, down to about a third for a word in every block.
    const rarity = Math.log(1 + (count + 1) / (frequency + 0.5)) / Math.log(1 + (count + 1) / 1.5);
    weights.set(term, (profile.weights.get(term) ?? 1) * Math.max(0.5, Math.min(1, rarity)));
  }
  return weights;
}

function weightedCoverage(weights: ReadonlyMap<string, number>, present: ReadonlySet<string>): number {
  let total = 0;
  let found = 0;
  for (const [term, weight] of weights) {
    total += weight;
    if (present.has(term)) found += weight;
  }
  return total === 0 ? 0 : found / total;
}

/** The largest share of the question's matched terms that stand within `WINDOW` words of each other. */
function proximity(tokens: readonly string[], wanted: ReadonlySet<string>): number {
  const positions = tokens.flatMap((token, index) => (wanted.has(token) ? [{ token, index }] : []));
  const distinct = new Set(positions.map((position) => position.token)).size;
  if (distinct < 2) return distinct === 1 && wanted.size === 1 ? 1 : 0;
  let best = 0;
  let from = 0;
  for (let to = 0; to < positions.length; to++) {
    while (positions[to]!.index - positions[from]!.index > WINDOW) from += 1;
    best = Math.max(best, new Set(positions.slice(from, to + 1).map((position) => position.token)).size);
  }
  return best / wanted.size;
}

/** True for a question that asks how to do something ("How do I…", "How can I…", "How to…"). */
function asksHow(profile: QuestionProfile): boolean {
  return profile.kind === 'procedure';
}

/** A passage that shows how: a command or code, or a sentence opening with the purpose ("To create…, use…"). */
function showsHow(passage: Passage, blocks: readonly Block[]): boolean {
  const kinds = blocks.slice(passage.first, passage.last + 1).map((block) => block.kind);
  return (
    kinds.includes('code') || /(?:^|\n)(?:To|For) [^,:\n]{3,80}, (?:use|run|type|call|add|set)\b/.test(passage.text)
  );
}

/** Words that set one thing beside another. */
const COMPARING =
  /\b(?:like|unlike|except|whereas|instead of|rather than|differ(?:s|ent|ence)?|equivalent|same as|compared)\b/i;

/**
 * True when a comparison's passage sets the two things it asks about side by side in its own prose
 * ("the notation `$@` … is just like `$*`, except that…"), not only in its code: it tells one from the
 * other.
 */
function contrasts(profile: QuestionProfile, text: string): boolean {
  if (profile.kind !== 'comparison' || profile.subjects.length !== 2) return false;
  const proseText = withoutCodeBlocks(text);
  if (!COMPARING.test(proseText)) return false;
  const prose = new Set(stems(proseText));
  return profile.subjects.every((subject) => {
    const wanted = stems(subject);
    return wanted.length > 0 && wanted.every((term) => prose.has(term));
  });
}

export interface PassageScore {
  score: number;
  /** The passage defines what a "what is" question asks about. */
  definition: boolean;
  /** What of `score` comes from the page's title (the lead's share). */
  titleBonus: number;
}

/**
 * The words of a text with the question's two-word terms it writes as one ("timezone" for "time zone",
 * "filesystem" for "file system"): then it holds both words of the question.
 */
function withCompounds(words: Set<string>, profile: QuestionProfile): Set<string> {
  for (const [first, second] of profile.compounds) {
    if (!words.has(stems(`${first}${second}`)[0] ?? '')) continue;
    for (const term of stems(`${first} ${second}`)) words.add(term);
  }
  return words;
}

/**
 * Words the manual may use for the question's ("remove" for "delete", `synonymStems`) → the question's
 * word each stands for, unless the question asks for that word too.
 */
function synonymsFor(profile: QuestionProfile): Map<string, string> {
  const standsFor = new Map<string, string>();
  for (const term of profile.terms)
    for (const synonym of synonymStems(term))
      if (!profile.terms.includes(synonym) && !standsFor.has(synonym)) standsFor.set(synonym, term);
  return standsFor;
}

/** The score of each passage of one source, in the order given. */
export function scorePassages(
  profile: QuestionProfile,
  source: SourceText,
  blocks: readonly Block[],
  passages: readonly Passage[],
  iteration: number,
): PassageScore[] {
  const weights = termWeights(profile, blocks);
  const standsFor = synonymsFor(profile);
  const asQuestionWords = (tokens: string[]) =>
    standsFor.size === 0 ? tokens : tokens.map((token) => standsFor.get(token) ?? token);
  const wanted = new Set(profile.terms);
  const symbols = new Set(profile.terms.filter(namesCode));
  const titled = Math.max(titledFor(profile, source.title), coverage(profile, new Set(stems(source.title))));
  // Where the page's lead ends: its first section heading below the page's own.
  const firstSection = blocks.findIndex(
    (block, index) =>
      block.kind === 'heading' && index > 0 && blocks.slice(0, index).some((each) => each.kind !== 'heading'),
  );
  // The first searches ask the question itself; later ones follow leads, and their pages count less.
  const relevance = (source.relevance ?? 0.5) * (iteration === 1 ? 1 : 0.6);
  return passages.map((passage) => {
    const tokens = asQuestionWords(stems(passage.text));
    // The section's own headings (below the page's, which every passage of the page shares).
    const path = passage.headings.split(' › ');
    const opensSection = blocks[passage.first - 1]?.kind === 'heading';
    // The entry of the symbol the question names ("-n, --dry-run" on git-clean's page for "What does
    // git clean -n do?"): its term and its page are what its text is about, though it repeats neither.
    const entry = passage.wholeSection || opensSection ? stems(path.at(-1) ?? '') : [];
    const entryOf = entry.some((term) => symbols.has(term));
    // Read as the reader reads it: the page, the term, then what the term does.
    const read = entryOf ? [...stems(source.title), ...entry, ...tokens] : tokens;
    const words = withCompounds(new Set(read), profile);
    const own = weightedCoverage(weights, words);
    const heading = lastHeading(passage.headings);
    // A page's lead stands under the page's own heading (or title): that says what it is about.
    const sectionPath = path.length > 1 ? path.slice(1).slice(-2) : [path[0] || source.title];
    const headingWords = withCompounds(new Set(asQuestionWords(stems(sectionPath.join(' ')))), profile);
    const named = Math.max(weightedCoverage(weights, headingWords) * 0.6, namedBy(profile, heading));
    const combined = weightedCoverage(weights, new Set([...words, ...headingWords]));
    // A version stamp alone ("Added in: v6.3.0") says nothing: it is quoted only with what it dates.
    const dated = blocks.slice(passage.first, passage.last + 1).every(isStamp);
    if ((own === 0 && named === 0) || dated) return { score: 0, definition: false, titleBonus: 0 };
    const firstBlock = blocks[passage.first]!;
    // A definition says what the subject is, or opens the section named for it (a glossary entry, a
    // symbol's entry).
    const definition =
      profile.kind === 'definition' &&
      (definesSubject(profile, firstBlock.text.replace(/[`*_]/g, '')) ||
        ((passage.wholeSection || opensSection) && namesSubject(profile, heading)) ||
        entryOf);
    let score =
      0.6 * combined +
      0.4 * own +
      HEADING_WEIGHT * named +
      PROXIMITY_WEIGHT * proximity(read, wanted) +
      SEARCH_WEIGHT * relevance;
    if (definition || contrasts(profile, passage.text)) score += DEFINITION_WEIGHT;
    else if (asksHow(profile) && own >= 0.5 && showsHow(passage, blocks)) score += KIND_WEIGHT;
    if (mentionsSubject(profile, passage.text) || mentionsSubject(profile, heading)) score += 0.1;
    const lead = firstSection === -1 || passage.first < firstSection;
    const titleBonus = lead ? LEAD_WEIGHT * titled : 0;
    score += titleBonus;
    if (!lead && opensSection) score += OPENING_WEIGHT * namedBy(profile, heading);
    // Length, not counting the caveats that come with the passage's own words, unless with them it
    // is longer than a passage may be on its own: then all of it is what the reader has to read.
    let core = passage.last;
    while (core > passage.first && blocks[core]!.kind === 'note') core -= 1;
    const whole = passage.end - passage.start;
    const length = whole > PASSAGE_CHARS ? whole : blocks[core]!.end - passage.start;
    if (length > CONCISE_CHARS) score -= LENGTH_PENALTY * Math.min(2, (length - CONCISE_CHARS) / CONCISE_CHARS);
    const before = blocks[passage.first - 1];
    if (firstBlock.kind === 'note' && before && before.kind !== 'heading') score *= LONE_NOTE;
    return { score: Math.max(0, Number(score.toFixed(4))), definition, titleBonus: Number(titleBonus.toFixed(4)) };
  });
}
