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
}

export interface OutlineSection {
  title: string;
  /** What the section covers, in a sentence. */
  focus: string;
  noteIds: string[];
}

export interface Outline {
  title: string;
  sections: OutlineSection[];
}

export interface FlaggedClaim {
  section: string;
  claim: string;
  citations: number[];
  reason: string;
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
  /** The answer of a follow-up answered from what the session already had. */
  answer?: string;
  notes: Note[];
  citations: CitedSource[];
  flagged: FlaggedClaim[];
  queries: string[];
  visited: string[];
  analyst: string;
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
}
