import type { SessionView } from '../../service/session-queries.ts';
import type { Session } from '../../store/store.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A session as listings show it: metadata only. */
export function sessionSummary(session: Session) {
  return {
    id: session.id,
    title: session.title,
    question: session.question,
    status: session.status,
    createdAt: iso(session.createdAt),
    updatedAt: iso(session.updatedAt),
    progress: { phase: session.progress.phase, completedSteps: session.progress.completedSteps, knownSteps: session.progress.knownSteps, resumePoint: session.progress.nextStep },
  };
}

/** Everything about a session. */
export function sessionDetail(view: SessionView) {
  const { session } = view;
  return {
    ...sessionSummary(session),
    settings: session.settings,
    workflow: session.workflow,
    error: session.error,
    resumePoint: view.resumePoint,
    pendingInput: view.pendingInput,
    messages: view.messages.map((message) => ({ ...message, createdAt: iso(message.createdAt) })),
    runs: view.runs.map((run) => ({ id: run.id, number: run.number, kind: run.kind, status: run.status, createdAt: iso(run.createdAt), endedAt: iso(run.endedAt) })),
    report: {
      latest: view.reports.at(-1)?.report ?? null,
      versions: view.reports.map((report) => ({ version: report.version, runId: report.runId, createdAt: iso(report.createdAt), report: report.report })),
    },
    sources: view.sources.map((source) => ({ ...source, createdAt: iso(source.createdAt) })),
  };
}
