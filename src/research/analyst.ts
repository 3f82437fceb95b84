import type { ResearchSettings } from './research-settings.ts';
import type { Note, Outline, OutlineSection, ResearchState, SourceText } from './research-types.ts';

export interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  costUsd?: number;
}

/**
 * One reasoning call, described before it runs, so the workflow can journal it: as an `llm` step
 * with its prompts when `model` is set, as a plain step otherwise.
 */
export interface AnalystCall<T> {
  model: string | null;
  system?: string;
  prompt?: string;
  run(signal: AbortSignal): Promise<{ output: T; usage?: TokenUsage }>;
}

export interface Analysis {
  done: boolean;
  reason: string;
  nextQueries: string[];
  /** Aspects of the question the notes now cover, and those still open (kept in the research state). */
  covered?: string[];
  open?: string[];
}

/** A claim of a report with the passages its citations point to. */
export interface ClaimToJudge {
  index: number;
  claim: string;
  passages: string[];
}

export interface ClaimJudgment {
  index: number;
  supported: boolean;
  reason: string;
}

export interface FollowUpAssessment {
  action: 'answer' | 'research';
  reason: string;
}

/**
 * The reasoning steps of research, behind one interface with two implementations: the LLM analyst
 * (any model through the AI SDK) and the extractive analyst (no model; deterministic).
 */
export interface Analyst {
  /** `extractive`, or the model (`openai:gpt-4.1-mini`). */
  readonly name: string;
  readonly usesModel: boolean;
  title(question: string, settings: ResearchSettings): AnalystCall<string>;
  /**
   * Questions to ask the person before researching, when the question is ambiguous (none when it is
   * clear); null when the analyst has no model to judge it.
   */
  clarify(input: { question: string; settings: ResearchSettings }): AnalystCall<{ questions: string[] }> | null;
  /** The first searches; `context` is the conversation and `state` what earlier runs learned (follow-ups). */
  plan(input: {
    question: string;
    settings: ResearchSettings;
    context?: string;
    state?: ResearchState;
  }): AnalystCall<{ queries: string[] }>;
  /** Notes from one source; ids start with `idPrefix`. */
  takeNotes(input: {
    question: string;
    source: SourceText;
    iteration: number;
    idPrefix: string;
    settings: ResearchSettings;
  }): AnalystCall<Note[]>;
  analyze(input: {
    question: string;
    notes: Note[];
    newNotes: Note[];
    iteration: number;
    asked: string[];
    settings: ResearchSettings;
    /** The summary of the previous iteration. */
    findings?: string;
  }): AnalystCall<Analysis>;
  outline(input: {
    question: string;
    notes: Note[];
    settings: ResearchSettings;
    feedback?: string;
    previous?: Outline;
    state?: ResearchState;
  }): AnalystCall<Outline>;
  /**
   * Section text with `[n]` markers from `citationFor` (URL → number); `onDelta` receives text as it
   * is written (the pieces joined are the text before trimming).
   */
  writeSection(input: {
    question: string;
    section: OutlineSection;
    notes: Note[];
    citationFor: Record<string, number>;
    settings: ResearchSettings;
    /** What the research found overall (the last iteration's summary). */
    findings?: string;
    onDelta?: (text: string) => void;
  }): AnalystCall<string>;
  /** A short summary of what the notes establish so far, for the next plan and the writer. */
  summarize(input: {
    question: string;
    notes: Note[];
    iteration: number;
    settings: ResearchSettings;
  }): AnalystCall<string>;
  /**
   * Whether each cited claim is supported by the passages it cites (a model's entailment check);
   * null when the analyst has no model, and the lexical check alone decides.
   */
  judgeClaims(input: {
    question: string;
    claims: ClaimToJudge[];
    settings: ResearchSettings;
  }): AnalystCall<ClaimJudgment[]> | null;
  assessFollowUp(input: {
    question: string;
    notes: Note[];
    conversation: string;
    settings: ResearchSettings;
  }): AnalystCall<FollowUpAssessment>;
  answer(input: {
    question: string;
    notes: Note[];
    report: string;
    conversation: string;
    citationFor: Record<string, number>;
    settings: ResearchSettings;
    /** Receives the answer as it is written; the pieces joined are the answer before trimming. */
    onDelta?: (text: string) => void;
  }): AnalystCall<string>;
}
