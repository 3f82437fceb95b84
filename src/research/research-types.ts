import type { ClaimVerdict } from '../shared/events.ts';

/** A fact taken from a source, with where it came from. */
export interface Note {
  id: string;
  url: string;
  title: string;
  text: string;
  /** Character offsets in the source document's text, when known. */
  start?: number;
  end?: number;
  query: string;
  iteration: number;
  /** How well the note answers the question, 0 to 1 (comparable across sources). */
  score?: number;
  /** The section the note comes from (`Basic Usage`), when the source has headings. */
  heading?: string;
  /** The whole heading path above the note (`Chapter › Section › Basic Usage`), when known. */
  headings?: string;
  /** Its source's place among the pages of the run's first search (`SourceText.lead`). */
  lead?: number;
  /** The note defines what the question asks about. */
  definition?: boolean;
  /**
   * The note is in the entry of a symbol the question names: its innermost heading names it
   * (`SESSION_COOKIE_AGE` for "What does the SESSION_COOKIE_AGE setting do?").
   */
  entry?: boolean;
  /**
   * What the note's score owes to its page's title (a page's lead counts as much as its title is about
   * the question): left out when pages are compared, since the search has weighed titles already.
   */
  titleBonus?: number;
  /** The note is its page's own summary of itself (its first paragraph), quoted before an answer from that page. */
  summary?: boolean;
  /** The source's own words the note rests on (a model's notes quote; extractive notes are quotes). */
  quote?: string;
  /** When the note quotes two sentences (the second leans on the first): where the second starts in `text`. */
  joined?: number;
  /**
   * The code block or list (Markdown, the source's own) that the note's sentence introduces ("use a
   * command similar to the following:"): quoted with it, never the lead-in alone.
   */
  follows?: string;
  /** Whether `quote` was found in the source; a note that is `false` here is never cited. */
  verified?: boolean;
}

/** A source as the workflow reads it. */
export interface SourceText {
  url: string;
  title: string;
  text: string;
  /** Offset of `text` in the whole document (local passages). */
  offset: number;
  query: string;
  provider: string;
  fetched: boolean;
  error?: string;
  /** The search's own judgment of the source: its score over the best score of that search, 0 to 1. */
  relevance?: number;
  /**
   * The source's place among the pages of the run's first search (0: its best), when that search
   * found it: the report's first citation never falls below what that search ranked first.
   */
  lead?: number;
  /** The section headings above the text (local documents). */
  headings?: string;
  /** Tokens of `text` (cl100k/o200k count), for the research state's tokens per source. */
  tokens?: number;
  /**
   * When the text is made of several passages of the document: where each starts in `text`, in the
   * document, and its headings (offsets of notes are mapped through these instead of `offset`).
   */
  segments?: { at: number; start: number; headings: string }[];
}

export interface OutlineSection {
  title: string;
  /** What the section covers, in a sentence. */
  focus: string;
  noteIds: string[];
  /**
   * A heading the section stands under with the sections next to it of the same group ("Also in
   * these documents"): the report writes the group's heading once and the section's one level down.
   */
  group?: string;
}

export interface Outline {
  title: string;
  sections: OutlineSection[];
  /** What a revision did with the reviewer's feedback (shown with the revised outline). */
  feedback?: { applied: string[]; notUnderstood: string[] };
}

/** A claim of a report and how it fared against its sources. */
export interface ClaimResult {
  section: string;
  claim: string;
  citations: number[];
  verdict: ClaimVerdict;
  reason: string;
  /** `[n]` markers that named no source of the report (removed from the text, recorded here). */
  unknownCitations?: number[];
}

/**
 * What research carries from run to run (journaled with each run's output, so a resumed run and a
 * follow-up see exactly what the run saw): the aspects of the question covered and still open, the
 * searches done and those that found nothing relevant, what the user asked for in feedback, the
 * latest findings, and how many tokens each source's text took.
 */
export interface ResearchState {
  aspects: { covered: string[]; open: string[] };
  topics: { done: string[]; irrelevant: string[] };
  preferences: string[];
  findings: string;
  tokensPerSource: Record<string, number>;
  /** True when the counts are estimates (no model read the sources: four characters a token). */
  tokensEstimated: boolean;
}

export interface CitedSource {
  number: number;
  url: string;
  title: string;
}

/** What a completed research or follow-up run returns (kept as the run's output). */
export interface ResearchOutput {
  /** The report, when this run wrote one (a new version). */
  report?: string;
  /** The follow-up's answer in the conversation (from what the session had, or beside a new version). */
  answer?: string;
  notes: Note[];
  /** What the report's `[n]` point to (a run without a report: the answer's). */
  citations: CitedSource[];
  /**
   * What the answer's `[n]` point to: its own numbers, which are not the report version's when the
   * run wrote both (absent in runs recorded before answers kept their own).
   */
  answerCitations?: CitedSource[];
  /** Claims that are not supported (kept for reports written before every claim was recorded). */
  flagged: ClaimResult[];
  /** Every claim with its verdict. */
  claims?: ClaimResult[];
  /** What the research carries into the next run (aspects, topics, preferences, tokens per source). */
  state?: ResearchState;
  queries: string[];
  visited: string[];
  analyst: string;
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
}
