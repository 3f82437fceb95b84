/**
 * Every event a session's log can hold: one discriminated union shared by the engine (which writes
 * them), the store (which numbers and keeps them), the SSE stream and the OpenAI/MCP bridges (which
 * send them), the CLI's progress and the web UI (which show them). Adding an event here is the only
 * step: the compiler then points at every `switch` that must handle it.
 *
 * This file imports nothing at run time, so the web UI bundles it as it is.
 */
import type { ErrorInfo } from './errors.ts';
import type { StepKind } from './step-kinds.ts';

export interface EventUsage {
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  costUsd?: number;
  latencyMs?: number;
}

/** What a model step sends, recorded when the step starts (so running and failed steps show it). */
export interface EventPrompt {
  model: string;
  system?: string;
  user: string;
}

/** How a claim of a report fared against its sources. */
export type ClaimVerdict = 'supported' | 'unsupported' | 'uncited';

/** The data of each event type. */
export interface EventDataMap {
  'session-create': { title: string };
  'session-fork': { from: string; beforeStep: string | null };
  'session-import': { originalId: string };
  /** The title or the settings changed (a rename, `quarry config`): listings show it at once. */
  'session-update': { title?: string; settings?: true };
  'run-start': { runId: string; number: number; workerId: string; resumeAt: string | null; completedSteps: number };
  'run-rewind': { from: string; step: string };
  'phase-start': { phase: string };
  'step-start': {
    key: string;
    phase: string | null;
    kind: StepKind;
    attempt: number;
    /** What the step works on, when it is small (a query, a URL); for showing progress. */
    input?: unknown;
    prompt?: EventPrompt;
  };
  'step-end': {
    key: string;
    phase: string | null;
    kind: StepKind;
    status: 'completed' | 'failed' | 'interrupted';
    durationMs?: number;
    usage?: EventUsage | null;
    error?: ErrorInfo;
  };
  /** A store or provider outage the run is waiting out (it retries by itself). */
  'step-retry': { key: string | null; attempt: number; delayMs: number; error: ErrorInfo };
  'input-request': { key: string; phase: string | null; payload: unknown };
  'input-receive': { key: string };
  /** Indexing of a document folder the run waits for: files done of all (throttled). */
  'index-progress': { folder: string; done: number; total: number };
  'source-found': { url: string; title: string; fetched: boolean; query?: string };
  /** Notes taken from a source; `unverified` of them quote words the source does not hold (never cited). */
  'notes-take': { url: string; title: string; count: number; unverified?: number };
  /** The end of an iteration: what the notes establish so far, and the aspects covered and open. */
  'findings-update': { iteration: number; summary: string; covered?: string[]; open?: string[] };
  /**
   * Text a writing step streams while it runs, exactly as the finished report (or answer) will hold
   * it: `offset` counts characters of this step's piece from 0 for each attempt (0 again: the step
   * started over, and its new text replaces the old). `message`: the text is the beginning of the
   * assistant message the run posts (a report that is not posted, or a draft, is not). `section` and
   * `title` name the report section.
   */
  'report-delta': { key: string; offset: number; text: string; message: boolean; section?: number; title?: string };
  'claim-flag': {
    section: string;
    claim: string;
    citations: number[];
    verdict: ClaimVerdict;
    reason: string;
    unknownCitations?: number[];
  };
  'run-end': { status: 'completed' | 'waiting' | 'interrupted' | 'queued'; reason?: string; waitingFor?: string };
  'run-error': ErrorInfo;
}

export type EventType = keyof EventDataMap;

/** An event as it is written: its type and that type's data. */
export type QuarryEvent = { [Type in EventType]: { type: Type; data: EventDataMap[Type] } }[EventType];

/** An event as the log keeps it: numbered per session, gapless. */
export type StoredEvent = QuarryEvent & {
  sessionId: string;
  /** 1, 2, 3… per session. */
  offset: number;
  createdAt: number;
};

/** An event as the SSE stream and the web UI carry it (JSON: the time as an ISO string). */
export type WireEvent = QuarryEvent & { offset: number; createdAt: string };

export function toWireEvent(stored: StoredEvent): WireEvent {
  const { sessionId: _sessionId, createdAt, ...rest } = stored;
  return { ...rest, createdAt: new Date(createdAt).toISOString() };
}

/** One entry per event type, so the runtime list below can never miss one. */
const eventTypeSet: Record<EventType, true> = {
  'session-create': true,
  'session-fork': true,
  'session-import': true,
  'session-update': true,
  'run-start': true,
  'run-rewind': true,
  'phase-start': true,
  'step-start': true,
  'step-end': true,
  'step-retry': true,
  'input-request': true,
  'input-receive': true,
  'index-progress': true,
  'source-found': true,
  'notes-take': true,
  'findings-update': true,
  'report-delta': true,
  'claim-flag': true,
  'run-end': true,
  'run-error': true,
};

/** Every event type, for validation and for clients that subscribe by name (SSE `event:` fields). */
export const eventTypes = Object.keys(eventTypeSet) as EventType[];

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && Object.hasOwn(eventTypeSet, value);
}

/** Builds an event with its data checked against its type. */
export function event<Type extends EventType>(type: Type, data: EventDataMap[Type]): QuarryEvent {
  return { type, data } as QuarryEvent;
}

/** True when a run's log has reached an end a client waits for (not a hand-back to the queue). */
export function isRunEnd(value: QuarryEvent): boolean {
  return value.type === 'run-error' || (value.type === 'run-end' && value.data.status !== 'queued');
}
