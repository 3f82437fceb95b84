import { computeResumePoint, type ResumePoint } from '../engine/resume-point.ts';
import type { ResearchOutput } from '../research/research-types.ts';
import { QuarryError, invalidInput } from '../store/errors.ts';
import type { Message, Run, Session, Source, StepDetail, StepRecord } from '../store/store.ts';
import type { ServiceContext } from './service-context.ts';

/** A full id from any unique prefix; an ambiguous prefix lists the candidates. */
export async function resolveSessionId(context: ServiceContext, prefix: string): Promise<string> {
  const trimmed = prefix.trim();
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(trimmed)) throw invalidInput('id', `"${prefix}" is not a session id or prefix`);
  const candidates = await context.store.findSessionIds(trimmed, { ownerId: context.ownerId, limit: 10 });
  if (candidates.includes(trimmed)) return trimmed;
  if (candidates.length === 1) return candidates[0]!;
  if (candidates.length === 0) throw new QuarryError('SESSION_NOT_FOUND', `No session with an id starting "${trimmed}". List them with: quarry ls.`, { details: { sessionId: trimmed } });
  throw new QuarryError('INVALID_INPUT', `"${trimmed}" matches several sessions: ${candidates.join(', ')}. Give more characters.`, { details: { field: 'id', candidates } });
}

export interface ReportVersion {
  version: number;
  runId: string;
  runNumber: number;
  createdAt: number;
  report: string;
}

export interface SessionView {
  session: Session;
  resumePoint: ResumePoint;
  messages: Message[];
  runs: Run[];
  /** Reports written by completed runs, oldest first; the last is the latest. */
  reports: ReportVersion[];
  sources: Source[];
  /** The request the session waits on (an outline to review), when waiting. */
  pendingInput: { key: string; payload: unknown } | null;
}

export function reportVersions(runs: Run[]): ReportVersion[] {
  return runs
    .filter((run) => run.status === 'completed' && typeof (run.output as Partial<ResearchOutput> | undefined)?.report === 'string')
    .map((run, index) => ({ version: index + 1, runId: run.id, runNumber: run.number, createdAt: run.endedAt ?? run.createdAt, report: (run.output as ResearchOutput).report! }));
}

/** Everything about one session, for `show` and `GET /api/sessions/:id`. */
export async function showSession(context: ServiceContext, sessionId: string): Promise<SessionView> {
  const session = await context.store.getSession(sessionId, { ownerId: context.ownerId });
  const [messages, runs, sources] = await Promise.all([
    context.store.listMessages(session.id, { ownerId: context.ownerId }),
    context.store.listRuns(session.id, { ownerId: context.ownerId }),
    context.store.listSources(session.id, { ownerId: context.ownerId }),
  ]);
  const journal: StepRecord[] = session.currentRunId ? await context.store.loadJournal(session.currentRunId) : [];
  const waiting = journal.find((step) => step.kind === 'input' && step.status !== 'completed');
  return {
    session,
    resumePoint: computeResumePoint(journal),
    messages,
    runs,
    reports: reportVersions(runs),
    sources,
    pendingInput: waiting ? { key: waiting.key, payload: waiting.input ?? null } : null,
  };
}

/** The journal across runs, optionally one phase, optionally with LLM prompts. */
export function listSessionSteps(context: ServiceContext, sessionId: string, options: { phase?: string; includePrompts?: boolean; runId?: string } = {}): Promise<StepDetail[]> {
  return context.store.listSteps(sessionId, { ...options, ownerId: context.ownerId, includeSuperseded: true });
}

export async function renameSession(context: ServiceContext, request: { sessionId: string; title: string }): Promise<Session> {
  return context.store.updateSession(request.sessionId, { title: request.title }, { ownerId: context.ownerId });
}

/** Deletes a session, stopping its run first; a session running in another process is refused. */
export async function deleteSession(context: ServiceContext, request: { sessionId: string }): Promise<void> {
  const session = await context.store.getSession(request.sessionId, { ownerId: context.ownerId });
  if (session.status === 'running') {
    if (context.runner?.stopSession(session.id, 'the session is being deleted')) {
      for (let wait = 0; wait < 100 && context.runner.activeSessions().includes(session.id); wait++) await new Promise((resolve) => setTimeout(resolve, 50));
    } else {
      await context.store.requestStop(session.id, { ownerId: context.ownerId });
    }
  }
  await context.store.deleteSession(session.id, { ownerId: context.ownerId });
}

/** Parses `30d`, `12h`, `45m`, `90s` into milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)\s*(ms|s|m|h|d|w)$/i.exec(text.trim());
  if (!match) throw invalidInput('--older-than', `"${text}" is not a duration like 30d, 12h or 45m`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[match[2]!.toLowerCase() as 'ms']!;
  return Number(match[1]) * unit;
}
