import { namesCode } from '../../shared/terms.ts';
import type { Analyst, AnalystCall } from '../analyst.ts';
import { asBlockquote, attributionLine } from '../quoted-report.ts';
import { coverage, profileQuestion, type QuestionProfile, stems } from '../relevance.ts';
import type { ResearchSettings } from '../research-settings.ts';
import type { Note, Outline, SourceText } from '../research-types.ts';
import { answerOutline, placeOf } from './answer-outline.ts';
import { announces } from './block-ties.ts';
import { withAnnounced } from './definition-entries.ts';
import { lastHeading } from './headings.ts';
import { applyFeedback } from './outline-feedback.ts';
import { DEFINITION_WEIGHT, scorePassages } from './passage-ranking.ts';
import {
  type Block,
  blocksOf,
  bridge,
  documentRange,
  type Passage,
  passagesOf,
  withoutCodeBlocks,
  withoutCutLeadIn,
} from './passages.ts';
import { coreWeight, feedbackTerms, isNewQuery, planFollowUpQueries, planQueries, surfaceTerms } from './queries.ts';

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

/** Passages kept per source read, best first. */
const NOTES_PER_SOURCE = 6;
/** The best passages of a source that may be joined with the blocks between them, and what joining adds. */
const BRIDGED = 4;
const BRIDGE_BONUS = 0.15;
/** A passage must reach this share of the best note's score to be worth a later search's words. */
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
 * Research without a language model, as a curator of passages: queries from the question (later,
 * from the best passages' own words), each source read as its author wrote it (paragraphs, lists,
 * code, tables, note boxes in their sections), the passages that best answer the question taken
 * whole with what they cannot be read without, and a report that opens with the best of them and
 * quotes every passage word for word, each under where it comes from. Deterministic: the same
 * question over the same corpus gives the same report.
 */
export class ExtractiveAnalyst implements Analyst {
  readonly name = 'extractive';
  readonly usesModel = false;

  title(question: string, _settings: ResearchSettings) {
    return local(() => shortTitle(question));
  }

  plan({ question, settings, context }: { question: string; settings: ResearchSettings; context?: string }) {
    return local(() => ({
      queries: context
        ? planFollowUpQueries(question, context, settings.queriesPerIteration)
        : planQueries(question, settings.queriesPerIteration),
    }));
  }

  takeNotes({ question, source, iteration, idPrefix }: Parameters<Analyst['takeNotes']>[0]) {
    return local((): Note[] => {
      const profile = profileQuestion(question);
      const blocks = blocksOf(source);
      const passages = passagesOf(source, blocks);
      const scores = scorePassages(profile, source, blocks, passages, iteration);
      const ranked = passages
        .map((passage, index) => ({ passage, ...scores[index]! }))
        .filter((entry) => entry.score > 0)
        .sort((a, b) => b.score - a.score || a.passage.first - b.passage.first);
      // The best passages of a section a block or two apart, quoted as one with what is between them.
      const best = ranked.slice(0, BRIDGED);
      for (const [index, a] of best.entries())
        for (const b of best.slice(index + 1)) {
          const joined = bridge(source, blocks, a.passage, b.passage);
          if (joined)
            ranked.push({
              passage: joined,
              score: Number((Math.max(a.score, b.score) + BRIDGE_BONUS * Math.min(a.score, b.score)).toFixed(4)),
              definition: a.definition || b.definition,
              titleBonus: Math.max(a.titleBonus, b.titleBonus),
            });
        }
      ranked.sort((a, b) => b.score - a.score || a.passage.first - b.passage.first);
      // The best passages that share no block, best first.
      const chosen: ((typeof ranked)[number] & { summary?: boolean })[] = [];
      for (const entry of ranked) {
        if (chosen.length >= NOTES_PER_SOURCE) break;
        const { first, last } = entry.passage;
        if (chosen.some(({ passage }) => first <= passage.last && passage.first <= last)) continue;
        chosen.push(entry);
      }
      // The page's own summary of itself comes along, for the answer to open with (see `answerOutline`);
      // a chosen passage that opens with it is that summary.
      const summary = pageSummary(source, blocks, passages);
      if (summary && chosen.length > 0) {
        const same = chosen.find(({ passage }) => passage.first === summary.first);
        if (same) same.summary = true;
        else if (!chosen.some(({ passage }) => passage.first <= summary.first && summary.first <= passage.last))
          chosen.push({
            passage: summary,
            score: Number((chosen[0]!.score * 0.5).toFixed(4)),
            definition: false,
            titleBonus: 0,
            summary: true,
          });
      }
      // A chosen lead-in is quoted with the definition list it announces; a chosen passage inside
      // those entries is then quoted there, once, and one that reaches beyond them stops the list.
      // In page order: a lead-in takes in the entries below it before they take in the next list.
      for (const entry of [...chosen].sort((a, b) => a.passage.first - b.passage.first)) {
        if (!chosen.includes(entry)) continue;
        const others = chosen.filter((other) => other !== entry);
        const crosses = (from: number, to: number) =>
          others.some(
            ({ passage }) => passage.first <= to && passage.last >= from && (passage.first < from || passage.last > to),
          );
        const whole = withAnnounced(source, blocks, entry.passage, crosses);
        if (whole === entry.passage) continue;
        const inside = others.filter(({ passage }) => passage.first > entry.passage.last && passage.last <= whole.last);
        entry.passage = whole;
        entry.score = Math.max(entry.score, ...inside.map((other) => other.score));
        entry.definition ||= inside.some((other) => other.definition);
        for (const other of inside) chosen.splice(chosen.indexOf(other), 1);
      }
      // A lead-in alone ("To recreate a primary key constraint…:"), what it announces not read or not
      // quotable with it, shows nothing: it is no note.
      const quoted = chosen
        .map((entry) => ({ ...entry, passage: withoutCutLeadIn(source, blocks, entry.passage) }))
        .filter(({ passage }) => passage.first !== passage.last || !announces(blocks[passage.first]!));
      return quoted.map(({ passage, score, definition, titleBonus, summary: isSummary }, index) => {
        const heading = lastHeading(passage.headings);
        return {
          id: `${idPrefix}-${index}`,
          url: source.url,
          title: source.title,
          text: passage.text,
          ...documentRange(source, passage),
          query: source.query,
          iteration,
          score,
          ...(heading ? { heading } : {}),
          ...(passage.headings ? { headings: passage.headings } : {}),
          ...(source.lead !== undefined ? { lead: source.lead } : {}),
          ...(definition ? { definition: true } : {}),
          ...(entryTerms(profile, passage).length > 0 ? { entry: true } : {}),
          ...(titleBonus > 0 ? { titleBonus } : {}),
          ...(isSummary ? { summary: true } : {}),
          // The note is the source's own text, placed by its offsets.
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
      const surface = surfaceTerms(question);
      const core = [...profile.terms]
        .sort((a, b) => coreWeight(profile, b) - coreWeight(profile, a))
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
      // A follow-up's report outlines earlier runs' notes too: which are entries is this question's to say.
      const profile = profileQuestion(question);
      return answerOutline(
        shortTitle(question),
        notes.map((note) => asEntryFor(profile, note)),
        settings,
      );
    });
  }

  writeSection({ notes, citationFor, onDelta }: Parameters<Analyst['writeSection']>[0]) {
    return local(() => {
      const text = notes.map((note) => quoted(note, citationFor[note.url]!)).join('\n\n');
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
      // A symbol ("What does -i do?") is answered by its entry: a note that only lists it (a synopsis,
      // "unless given -f, -i or -n") tells nothing of it.
      if (profile.terms.some(namesCode) && !notes.some((note) => entryTerms(profile, note).length > 0))
        return { action: 'research' as const, reason: 'no stored passage is the entry of what the question names' };
      // What a note says, not what its code shows.
      const best = Math.max(0, ...notes.map((note) => coverage(profile, new Set(stems(withoutCodeBlocks(note.text))))));
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

  answer({ question, notes, citationFor, settings }: Parameters<Analyst['answer']>[0]) {
    return local(() => {
      // The stored passages that best answer the follow-up, scored again for it, quoted as a report quotes.
      const profile = profileQuestion(question);
      // An entry's term is what its text is about ("-i, --interactive": "Show what would be done…"),
      // and for "what does -i do?" the entry is its definition.
      const rescored = notes.map((note) => {
        const entry = entryTerms(profile, note);
        const defines = profile.kind === 'definition' && entry.length > 0;
        const covered = coverage(profile, new Set([...termsOf(note), ...entry]));
        const score = covered + (note.score ?? 0) * 0.1 + (defines ? DEFINITION_WEIGHT : 0);
        return {
          ...asEntryFor(profile, note),
          ...(defines ? { definition: true } : {}),
          score: Number(score.toFixed(4)),
        };
      });
      const outline = answerOutline(
        shortTitle(question),
        rescored.filter((note) => (note.score ?? 0) > 0.3),
        {
          ...settings,
          reportLength: 'short',
        },
      );
      // Whole sections, the answer's first: a page's summary never without the passage it opens.
      const chosen: string[] = [];
      for (const section of outline.sections) {
        if (chosen.length > 0 && chosen.length + section.noteIds.length > FOLLOW_UP_NOTES) break;
        chosen.push(...section.noteIds);
      }
      if (chosen.length === 0) return '_The sources gathered so far do not address this question._';
      const byId = new Map(rescored.map((note) => [note.id, note]));
      return chosen.map((id) => quoted(byId.get(id)!, citationFor[byId.get(id)!.url]!)).join('\n\n');
    });
  }
}

/**
 * The terms of a note's innermost heading when that heading names a symbol the question asks about
 * (the note is that symbol's entry: "-i, --interactive" for "What does -i do?"); none otherwise.
 */
function entryTerms(profile: QuestionProfile, note: Pick<Note, 'headings'>): string[] {
  const terms = stems((note.headings ?? '').split(' › ').at(-1) ?? '');
  return terms.some((term) => namesCode(term) && profile.terms.includes(term)) ? terms : [];
}

/**
 * The note with `entry` as this question says: a note stored for an earlier question (a follow-up's
 * context) was that question's entry, not necessarily this one's.
 */
function asEntryFor(profile: QuestionProfile, note: Note): Note {
  const { entry: _stored, ...rest } = note;
  return entryTerms(profile, note).length > 0 ? { ...rest, entry: true } : rest;
}

/** Most passages an offline follow-up answer quotes (its answer section's, when that has more). */
const FOLLOW_UP_NOTES = 3;

/** Characters of the document a page's summary starts within, and its size bounds. */
const SUMMARY_WITHIN = 800;
const SUMMARY_CHARS = 320;

/**
 * A page's own summary of itself: its first paragraph of six words or more, short and near the
 * document's start or near the page's own heading (a manual page's NAME line, a module page's opening
 * sentence after the site's menu), if it names the page (a word of its title); null when the page
 * has none in what was read.
 */
function pageSummary(source: SourceText, blocks: readonly Block[], passages: readonly Passage[]): Passage | null {
  // The page's own heading, not the first heading of what a search read of it ("Performance
  // measurement APIs › performance.toJSON()": the paragraph under it describes one method).
  const heading = blocks.find((block) => block.kind === 'heading');
  const path = heading?.headings.split(' › ') ?? [];
  const pageHeading = heading && (path.length === 1 || path.at(-1) === source.title);
  const anchors = [0, pageHeading ? documentRange(source, heading).start : 0];
  const index = blocks.findIndex((block) => {
    if (block.kind !== 'paragraph' || block.text.split(/\s+/).length < 6) return false;
    const start = documentRange(source, block).start;
    return anchors.some((anchor) => start >= anchor && start - anchor < SUMMARY_WITHIN);
  });
  if (index === -1) return null;
  const block = blocks[index]!;
  if (block.end - block.start > SUMMARY_CHARS) return null;
  // A lead-in ("Several options control the overall operation of `m4`:") announces a list; it sums nothing up.
  if (/:\s*$/.test(block.text)) return null;
  // A summary names what the page is about; a preface ("This is the map of the code…") does not.
  const named = new Set(stems(block.text));
  if (!stems(source.title).some((word) => named.has(word))) return null;
  return passages.find((passage) => passage.first === index && passage.last === index) ?? null;
}

/**
 * A note as the report quotes it: its text whole, as a blockquote, then one line that says where it
 * is and cites it. (A note of an earlier version's sentences brings the code block or list it
 * introduced, which followed it in the source.)
 */
function quoted(note: Note, number: number): string {
  const text = note.follows ? `${note.text}\n\n${note.follows}` : note.text;
  return `${asBlockquote(text)}\n\n${attributionLine(placeOf(note), number)}`;
}
