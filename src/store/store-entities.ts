import type { ErrorInfo } from '../shared/errors.ts';
import type { QuarryEvent } from '../shared/events.ts';
import type { StepKind } from '../shared/step-kinds.ts';
import type { CheckpointSnapshot } from './checkpoint-tables.ts';

/**
 * What the store's concerns share: sessions, their messages, runs, steps and sources, leases and
 * fences, the scope of an owner, and a whole session as export files carry it. `store.ts` exports
 * all of it; each concern's contract (`sessions-contract.ts`, `journal-contract.ts`, …) builds on it.
 */

export const sessionStatuses = ['queued', 'running', 'waiting', 'completed', 'failed', 'interrupted'] as const;
export type SessionStatus = (typeof sessionStatuses)[number];

export const messageRoles = ['user', 'assistant', 'system'] as const;
export type MessageRole = (typeof messageRoles)[number];

export { type StepKind, stepKinds } from '../shared/step-kinds.ts';

/** `running`: begun and not yet ended (or its worker died). `superseded`: rewound; kept, never replayed. */
export type StepStatus = 'running' | 'completed' | 'failed' | 'superseded';

export interface WorkflowRef {
  name: string;
  /** Incremented when a change makes old journals unreplayable. */
  version: number;
}

/** Where a session stands, kept on the session row so listings never read journals. */
export interface SessionProgress {
  /** Phase of the most recently completed step of the current run, or null before any. */
  phase: string | null;
  /** Completed, not superseded steps of the current run. */
  completedSteps: number;
  /** Recorded, not superseded steps of the current run (completed or not). */
  knownSteps: number;
  /** Key of the first recorded step that has not completed (by `seq`), or null. */
  nextStep: string | null;
}

export interface LeaseInfo {
  workerId: string;
  epoch: number;
  expiresAt: number;
  /** The machine (and process namespace) and process that hold it, when the claimer said so. */
  host: string | null;
  pid: number | null;
}

export interface Session {
  id: string;
  ownerId: string;
  title: string;
  question: string;
  /**
   * Effective status: a `running` session whose lease has expired is reported as `interrupted`
   * (see `storedStatus` for the raw column).
   */
  status: SessionStatus;
  storedStatus: SessionStatus;
  settings: Record<string, unknown>;
  workflow: WorkflowRef;
  currentRunId: string | null;
  progress: SessionProgress;
  /** The live or last lease; `null` when released. */
  lease: LeaseInfo | null;
  /** Epoch of the most recent claim; grows on every claim and never goes back. */
  leaseEpoch: number;
  /** Claims since the session last ended cleanly (completed, waiting, interrupted, failed by its run). */
  claimCount: number;
  stopRequested: boolean;
  error: ErrorInfo | null;
  /** Offset of the newest event, 0 when there are none. */
  lastEventOffset: number;
  /** The session this one was forked from. */
  forkedFrom: string | null;
  /** The caller's own id for it (a job id), unique per owner. */
  externalId: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface Message {
  id: string;
  sessionId: string;
  /** 1, 2, 3… in order of appending within the session. */
  seq: number;
  role: MessageRole;
  content: string;
  runId: string | null;
  phase: string | null;
  createdAt: number;
}

export type RunStatus = 'open' | 'completed' | 'failed';

export interface Run {
  id: string;
  sessionId: string;
  /** 1 for the first run of a session, then 2, 3… */
  number: number;
  /** What started it: `initial`, `follow-up`, `feedback`, or any workflow-defined word. */
  kind: string;
  input: unknown;
  status: RunStatus;
  output: unknown;
  createdAt: number;
  endedAt: number | null;
  /** The W3C `traceparent` of the request that started it, when tracing was on. */
  traceContext: string | null;
}

export interface StepUsage {
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  costUsd?: number;
  latencyMs?: number;
}

/** A completed step's key and what it spent, for sums over a session. */
export interface StepUsageRecord {
  key: string;
  usage: StepUsage | null;
}

/** One journaled step. `input` and `output` are decoded JSON values (`undefined` round-trips). */
export interface StepRecord {
  runId: string;
  key: string;
  /** Order of first recording within the run, from 1; a re-recorded key after a rewind gets a new seq. */
  seq: number;
  phase: string | null;
  kind: StepKind;
  status: StepStatus;
  /** How many times this step was begun. */
  attempts: number;
  input: unknown;
  output: unknown;
  error: ErrorInfo | null;
  usage: StepUsage | null;
  startedAt: number;
  endedAt: number | null;
  /** Parts the store holds but cannot give back (damage on disk), each with what is wrong. */
  damage?: StepDamage;
}

/** Which payloads of a step are damaged in the store, and how; a damaged payload reads as absent. */
export interface StepDamage {
  /** The whole row could not be read: the step is shown as failed, with only its place known. */
  row?: string;
  input?: string;
  output?: string;
  usage?: string;
  prompt?: string;
}

/** The prompt of an LLM step, stored apart from the journal and loaded only on request. */
export interface StepPrompt {
  /** `provider:model`. */
  model?: string;
  system?: string;
  user: string;
}

export interface StepDetail extends StepRecord {
  prompt: StepPrompt | null;
}

export interface Source {
  id: string;
  sessionId: string;
  /** A URL, or a `file://` URL for a local document. */
  url: string;
  title: string;
  contentHash: string | null;
  /** Number used in `[n]` markers once cited; null until then. */
  citation: number | null;
  timesConsidered: number;
  timesSelected: number;
  metadata: Record<string, unknown>;
  runId: string | null;
  createdAt: number;
}

export interface Lease {
  sessionId: string;
  workerId: string;
  epoch: number;
  expiresAt: number;
  /** Set by `claimNext` when the claim took a lapsed lease over (its holder died). */
  tookOver?: boolean;
}

/** What fenced writes carry: the claim they were made under. */
export interface Fence {
  sessionId: string;
  epoch: number;
}

/** A whole session as export files carry it; `importSession` recreates it. */
export interface SessionSnapshot {
  session: {
    id: string;
    /** A LangGraph thread's `langgraph:<thread id>`, which an import keeps (others are not exported). */
    externalId?: string | null;
    title: string;
    question: string;
    status: SessionStatus;
    settings: Record<string, unknown>;
    workflow: WorkflowRef;
    error: ErrorInfo | null;
    createdAt: number;
    updatedAt: number;
  };
  messages: Pick<Message, 'seq' | 'role' | 'content' | 'runId' | 'phase' | 'createdAt'>[];
  runs: Pick<Run, 'id' | 'number' | 'kind' | 'input' | 'status' | 'output' | 'createdAt' | 'endedAt'>[];
  /** Live steps of every run, with prompts. */
  steps: StepDetail[];
  sources: Pick<
    Source,
    | 'url'
    | 'title'
    | 'contentHash'
    | 'citation'
    | 'timesConsidered'
    | 'timesSelected'
    | 'metadata'
    | 'runId'
    | 'createdAt'
  >[];
  /** A LangGraph thread's checkpoints, oldest first (absent for a research session). */
  checkpoints?: CheckpointSnapshot[];
}

/** An event as it is written (type and its data), before the store numbers it. */
export type EventInput = QuarryEvent;

export interface OwnerScope {
  ownerId?: string;
}

/**
 * Limits a write that adds a session or makes one runnable is admitted under: checked with the
 * write, in its transaction, under a lock per owner, so concurrent writes cannot exceed them
 * (`RATE_LIMITED` otherwise). Omitted: no limit (the CLI's local user).
 */
export interface Admission {
  /** Sessions the owner may keep in all (checked when one is added). */
  sessions?: number;
  /** Sessions the owner may have queued or running at once (checked when one becomes runnable). */
  activeRuns?: number;
}
