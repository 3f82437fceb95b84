import { pathToFileURL } from 'node:url';
import { computeResumePoint, type ResumePoint } from '../engine/resume-point.ts';
import { type Ledger, ledgerOf } from '../research/ledger.ts';
import { readResearchState } from '../research/research-state.ts';
import type { CitedSource, ClaimResult, ResearchState } from '../research/research-types.ts';
import { runOutput, runReport } from '../research/step-outputs.ts';
import { invalidInput, QuarryError } from '../shared/errors.ts';
import type { Message, Run, Session, Source, StepDetail } from '../store/store.ts';
import type { ServiceContext } from './service-context.ts';

/**
 * A full id from a session id, the caller's own external id for it (a job id), or a unique prefix of
 * an id, in that order; an ambiguous prefix lists the candidates.
 */
export async function resolveSessionId(context: ServiceContext, prefix: string): Promise<string> {
  const trimmed = prefix.trim();
  if (!/^[\w:.@-]{1,200}$/.test(trimmed)) throw invalidInput('id', `"${prefix}" is not a session id or prefix`);
  const candidates = /^[A-Za-z0-9_-]{1,128}$/.test(trimmed)
    ? await context.store.findSessionIds(trimmed, { limit: 10 })
    : [];
  if (candidates.includes(trimmed)) return trimmed;
  const external = await context.store.findSessionByExternalId(trimmed);
  if (external) return external.id;
  if (candidates.length === 1) return candidates[0]!;
  if (candidates.length === 0)
    throw new QuarryError(
      'SESSION_NOT_FOUND',
      `No session with the id or external id "${trimmed}", or an id starting so. List them with: quarry ls.`,
      { details: { sessionId: trimmed } },
    );
  throw new QuarryError(
    'INVALID_INPUT',
    `"${trimmed}" matches several sessions: ${candidates.join(', ')}. Give more characters.`,
    { details: { field: 'id', candidates } },
  );
}

export interface ReportVersion {
  version: number;
  runId: string;
  runNumber: number;
  createdAt: number;
  /** What the run that wrote it set out to answer: the session's question, or a follow-up's. */
  question: string;
  /** How that run started: `initial`, `follow-up`, `feedback` (an outline or report revised)… */
  kind: string;
  report: string;
  /** Every claim of the report with its verdict against its sources. */
  claims: ClaimResult[];
  /** What this version's `[n]` point to (numbers differ between versions). */
  citations: CitedSource[];
}

export interface SessionView {
  session: Session;
  resumePoint: ResumePoint;
  messages: Message[];
  runs: Run[];
  /** Reports written by completed runs, oldest first; the last is the latest. */
  reports: ReportVersion[];
  /** The conversation's answers that are not report versions, by message id, with their own citations. */
  answers: Map<string, AnswerCitations>;
  sources: Source[];
  /** The request the session waits on (an outline to review), when waiting. */
  pendingInput: { key: string; payload: unknown } | null;
  /** Sessions forked from this one. */
  forks: Session[];
  /** What the research carries across runs, as of the latest completed run (null before one). */
  researchState: ResearchState | null;
  /** Tokens, cost, searches and sources read over every run. */
  ledger: Ledger;
}

export function reportVersions(runs: Run[]): ReportVersion[] {
  return runs
    .filter((run) => runReport(run) !== undefined)
    .map((run, index) => ({
      version: index + 1,
      runId: run.id,
      runNumber: run.number,
      createdAt: run.endedAt ?? run.createdAt,
      question: questionOf(run),
      kind: run.kind,
      report: runReport(run)!,
      claims: runOutput(run)?.claims ?? runOutput(run)?.flagged ?? [],
      citations: (runOutput(run)?.citations ?? []).map(({ number, url, title }) => ({
        number,
        url,
        title,
      })),
    }));
}

/** The question a run set out to answer, as its input recorded it ('' when it recorded none). */
function questionOf(run: Run): string {
  const question = (run.input as { question?: unknown } | null)?.question;
  return typeof question === 'string' ? question : '';
}

/** What an answer in the conversation cites, under its own numbers, and its claims as checked. */
export interface AnswerCitations {
  citations: CitedSource[];
  claims: ClaimResult[];
}

/**
 * The answers of the conversation that are not report versions, by message id, each with its own
 * citation map: a run that wrote only an answer numbered its sources for it (`citations`); one that
 * wrote a report version and an answer beside it keeps the answer's apart (`answerCitations`). An
 * answer recorded before that (no map kept) is read back from its own source list, never resolved
 * against another text's numbers.
 */
export function answerCitations(messages: readonly Message[], runs: readonly Run[]): Map<string, AnswerCitations> {
  const runsById = new Map(runs.map((run) => [run.id, run]));
  const answers = new Map<string, AnswerCitations>();
  for (const message of messages) {
    if (message.role !== 'assistant' || !message.runId) continue;
    const output = runOutput(runsById.get(message.runId));
    if (typeof output?.answer !== 'string' || output.answer !== message.content) continue;
    const answerOnly = typeof output.report !== 'string';
    answers.set(message.id, {
      citations: (
        output.answerCitations ??
        (answerOnly ? output.citations : undefined) ??
        listedCitations(message.content)
      ).map(({ number, url, title }) => ({ number, url, title })),
      claims: answerOnly ? (output.claims ?? output.flagged ?? []) : [],
    });
  }
  return answers;
}

/** The sources an answer lists after its text (`- [5] Title — <where>`, or an older `5. Title — <where>`). */
function listedCitations(answer: string): CitedSource[] {
  const list = answer.split(/^\*\*Sources\*\*\s*$/m)[1] ?? '';
  return [...list.matchAll(/^(?:- \[(\d+)\]|(\d+)\.) (.+) — <(.+)>$/gm)].map((match) => {
    const where = match[4]!;
    return {
      number: Number(match[1] ?? match[2]),
      title: match[3]!,
      url: where.startsWith('/') ? pathToFileURL(where).href : where,
    };
  });
}

/** One report version of a session, with its text; `NOT_FOUND` when the session has no such version. */
export async function sessionReport(
  context: ServiceContext,
  request: { sessionId: string; version: number },
): Promise<ReportVersion> {
  const found = reportVersions(await context.store.listRuns(request.sessionId))[request.version - 1];
  if (!found)
    throw new QuarryError('NOT_FOUND', `Session "${request.sessionId}" has no report version ${request.version}.`, {
      details: { sessionId: request.sessionId, version: request.version },
    });
  return found;
}

/** The research state of the latest completed run that recorded one. */
export function latestResearchState(runs: Run[]): ResearchState | null {
  for (const run of [...runs].reverse()) {
    const state = runOutput(run)?.state;
    if (run.status === 'completed' && state) return readResearchState(state);
  }
  return null;
}

/** Everything about one session, for `show` and `GET /api/sessions/:id`. */
export async function showSession(context: ServiceContext, sessionId: string): Promise<SessionView> {
  const session = await context.store.getSession(sessionId);
  const [messages, runs, sources, journal, forks, usage] = await Promise.all([
    context.store.listMessages(session.id),
    context.store.listRuns(session.id),
    context.store.listSources(session.id),
    context.store.loadCurrentJournal(session.id),
    context.store.listForks(session.id),
    context.store.listStepUsage(session.id),
  ]);
  const waiting = journal.find((step) => step.kind === 'input' && step.status !== 'completed');
  return {
    session,
    resumePoint: computeResumePoint(journal),
    messages,
    runs,
    reports: reportVersions(runs),
    answers: answerCitations(messages, runs),
    sources,
    pendingInput: waiting ? { key: waiting.key, payload: waiting.input ?? null } : null,
    forks,
    researchState: latestResearchState(runs),
    ledger: ledgerOf(usage),
  };
}

/** The journal across runs (superseded steps included), optionally one phase, optionally with prompts. */
export function listSessionSteps(
  context: ServiceContext,
  sessionId: string,
  options: { phase?: string; includePrompts?: boolean; runId?: string } = {},
): Promise<StepDetail[]> {
  return context.store.listSteps(sessionId, { ...options, includeSuperseded: true });
}

/** One step of one of the session's runs, with its prompt and output. */
export function getSessionStep(
  context: ServiceContext,
  request: { sessionId: string; runId: string; key: string },
): Promise<StepDetail> {
  return context.store.getStep(request.sessionId, request.runId, request.key);
}

/** The conversation, optionally one run or phase. */
export function listSessionMessages(
  context: ServiceContext,
  sessionId: string,
  options: { runId?: string; phase?: string } = {},
): Promise<Message[]> {
  return context.store.listMessages(sessionId, options);
}

/** The sources, cited ones first by number. */
export function listSessionSources(context: ServiceContext, sessionId: string): Promise<Source[]> {
  return context.store.listSources(sessionId);
}

export async function renameSession(
  context: ServiceContext,
  request: { sessionId: string; title: string },
): Promise<Session> {
  return context.store.updateSession(request.sessionId, { title: request.title });
}

/**
 * Deletes a session and everything it holds. A running session is refused (`SESSION_ALREADY_RUNNING`)
 * unless `force`, which stops it first and waits for its worker to let go.
 */
export async function deleteSession(
  context: ServiceContext,
  request: { sessionId: string; force?: boolean },
): Promise<void> {
  const session = await context.store.getSession(request.sessionId);
  if (session.status === 'running') {
    const short = session.id.slice(0, 8);
    if (!request.force) {
      throw new QuarryError(
        'SESSION_ALREADY_RUNNING',
        `Session ${short} is running on worker "${session.lease?.workerId}". Stop it first (quarry stop ${short}), or delete it anyway with --force.`,
        { details: { sessionId: session.id } },
      );
    }
    await stopAndWait(context, session);
  }
  await context.store.deleteSession(session.id);
}

/** Why a session deleted while it runs is stopped: the terminal running it says so instead of offering a resume. */
export const DELETING_REASON = 'the session is being deleted';

/** Stops a running session and waits (up to the lease length) until no worker holds it. */
async function stopAndWait(context: ServiceContext, session: Session): Promise<void> {
  if (!context.runner?.stopSession(session.id, DELETING_REASON))
    await context.store.requestStop(session.id, { reason: DELETING_REASON });
  const deadline = Date.now() + Math.max(15_000, (session.lease?.expiresAt ?? 0) - Date.now());
  while (Date.now() < deadline) {
    const current = await context.store.getSession(session.id);
    if (current.status !== 'running' && !context.runner?.activeSessions().includes(session.id)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Deletes the user's finished sessions older than the age: completed and failed ones, and
 * interrupted ones only when asked (they can still be resumed). `dryRun` counts them.
 */
export function collectGarbage(
  context: ServiceContext,
  request: { olderThan: string; includeInterrupted?: boolean; dryRun?: boolean },
): Promise<{ deleted: number }> {
  return context.store.deleteFinishedSessions({
    olderThanMs: parseDuration(request.olderThan),
    statuses: request.includeInterrupted ? ['completed', 'failed', 'interrupted'] : ['completed', 'failed'],
    dryRun: request.dryRun,
  });
}

/** Parses `30d`, `12h`, `45m`, `90s` into milliseconds. */
export function parseDuration(text: string, field = '--older-than'): number {
  const match = /^(\d+)\s*(ms|s|m|h|d|w)$/i.exec(text.trim());
  if (!match) throw invalidInput(field, `"${text}" is not a duration like 30d, 12h or 45m`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[
    match[2]!.toLowerCase() as 'ms'
  ]!;
  return Number(match[1]) * unit;
}
