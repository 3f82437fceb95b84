import type { Run, StepRecord } from '../store/store.ts';
import type { Analysis, TokenUsage } from './analyst.ts';
import type { Note, ResearchOutput, SourceText } from './research-types.ts';
import { parseStepKey, stepKeys } from './step-keys.ts';

/**
 * What the research workflow journals, typed in one place beside its keys (`step-keys.ts`): the
 * workflow writes each step's output as the type named here, and everything that reads a journal
 * outside the workflow (export, citations, the legacy layout, the CLI) reads it through
 * `stepOutput` and `runOutput`, so changing what a step stores is a compile error at every reader.
 */

/** What a `think` step journals: the analyst's output, and what the call cost (null without a model). */
export interface Thought<T> {
  value: T;
  usage: TokenUsage | null;
}

/** What each kind of research step journals as its output, by the kind its key names. */
export interface ResearchStepOutputs {
  /** `plan`: the first queries. */
  plan: Thought<{ queries: string[] }>;
  /** `iteration-N/read-I`: the source as read, with its token count. */
  read: SourceText;
  /** `iteration-N/notes-I`: the passages taken from that source. */
  notes: Thought<Note[]>;
  /** `iteration-N/analyze`: whether to stop, and the next queries. */
  analyze: Thought<Analysis>;
}

export type ResearchStepKind = keyof ResearchStepOutputs;

function kindOf(key: string): ResearchStepKind | null {
  if (key === stepKeys.plan) return 'plan';
  const kind = parseStepKey(key)?.kind;
  return kind === 'read' || kind === 'notes' || kind === 'analyze' ? kind : null;
}

/** A completed step's output as the workflow wrote it, when the step's key is of that kind; else undefined. */
export function stepOutput<K extends ResearchStepKind>(
  step: Pick<StepRecord, 'key' | 'status' | 'output'> | undefined,
  kind: K,
): ResearchStepOutputs[K] | undefined {
  if (step?.status !== 'completed' || kind !== kindOf(step.key)) return undefined;
  return (step.output ?? undefined) as ResearchStepOutputs[K] | undefined;
}

/**
 * What a research run returned (a report, an answer, its notes and citations); undefined for a run
 * that has not ended. Fields are optional: runs recorded by earlier versions lack some.
 */
export function runOutput(run: { output?: unknown } | undefined): Partial<ResearchOutput> | undefined {
  const output = run?.output;
  return output !== null && typeof output === 'object' ? (output as Partial<ResearchOutput>) : undefined;
}

/** A completed run's report, when it wrote one. */
export function runReport(run: Pick<Run, 'status' | 'output'>): string | undefined {
  if (run.status !== 'completed') return undefined;
  const report = runOutput(run)?.report;
  return typeof report === 'string' ? report : undefined;
}
