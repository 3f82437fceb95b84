import type { ReportVersion, SessionView } from '../../service/session-queries.ts';
import type { Message, Session, Source, StepDetail } from '../../store/store.ts';
import type {
  MessageWire,
  ReportVersionWire,
  SessionDetailWire,
  SessionSummaryWire,
  SourceWire,
  StepWire,
} from '../wire.ts';

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/** A session as listings show it: metadata only. */
export function sessionSummary(session: Session): SessionSummaryWire {
  return {
    id: session.id,
    title: session.title,
    question: session.question,
    status: session.status,
    createdAt: iso(session.createdAt),
    updatedAt: iso(session.updatedAt),
    progress: {
      phase: session.progress.phase,
      completedSteps: session.progress.completedSteps,
      knownSteps: session.progress.knownSteps,
      resumePoint: session.progress.nextStep,
    },
    forkedFrom: session.forkedFrom,
  };
}

export function messageWire(message: Message): MessageWire {
  return {
    id: message.id,
    seq: message.seq,
    role: message.role,
    content: message.content,
    runId: message.runId,
    phase: message.phase,
    createdAt: iso(message.createdAt),
  };
}

export function sourceWire(source: Source): SourceWire {
  return {
    id: source.id,
    url: source.url,
    title: source.title,
    citation: source.citation,
    timesConsidered: source.timesConsidered,
    timesSelected: source.timesSelected,
    metadata: source.metadata,
    runId: source.runId,
    createdAt: iso(source.createdAt),
  };
}

/** A journal step; `detail` adds its input, prompt and output (`'inputs'`: its input only). */
export function stepWire(step: StepDetail, detail: boolean | 'inputs'): StepWire {
  return {
    runId: step.runId,
    key: step.key,
    seq: step.seq,
    phase: step.phase,
    kind: step.kind,
    status: step.status,
    attempts: step.attempts,
    startedAt: iso(step.startedAt),
    endedAt: isoOrNull(step.endedAt),
    durationMs: step.endedAt === null ? null : step.endedAt - step.startedAt,
    usage: step.usage,
    error: step.error,
    ...(detail === 'inputs'
      ? { input: step.input }
      : detail
        ? { input: step.input, prompt: step.prompt, output: step.output }
        : {}),
    ...(step.damage ? { damage: step.damage } : {}),
  };
}

/** Everything about a session. */
/** A report version as the API gives it, without its text. */
export function reportVersionWire(report: ReportVersion): ReportVersionWire {
  return {
    version: report.version,
    runId: report.runId,
    createdAt: iso(report.createdAt),
    question: report.question,
    kind: report.kind,
    claims: report.claims,
    citations: report.citations,
  };
}

export function sessionDetail(view: SessionView): SessionDetailWire {
  const { session } = view;
  const versionOf = new Map(view.reports.map((report) => [report.report, report.version]));
  return {
    ...sessionSummary(session),
    settings: session.settings,
    workflow: session.workflow,
    error: session.error,
    resumePoint: view.resumePoint,
    pendingInput: view.pendingInput,
    // An answer that is a report version points at it instead of carrying its text again.
    messages: view.messages.map((message) => {
      const version = message.role === 'assistant' ? versionOf.get(message.content) : undefined;
      if (version !== undefined) return { ...messageWire(message), content: '', reportVersion: version };
      // An answer numbers its sources its own way: its `[n]` resolve against its own list.
      const answer = view.answers.get(message.id);
      return answer ? { ...messageWire(message), citations: answer.citations } : messageWire(message);
    }),
    runs: view.runs.map((run) => ({
      id: run.id,
      number: run.number,
      kind: run.kind,
      status: run.status,
      createdAt: iso(run.createdAt),
      endedAt: isoOrNull(run.endedAt),
    })),
    report: {
      latest: view.reports.at(-1)?.report ?? null,
      // Without their text: the latest is above, any other one is `GET …/reports/{version}`.
      versions: view.reports.map(reportVersionWire),
    },
    sources: view.sources.map(sourceWire),
    forks: view.forks.map((fork) => ({ id: fork.id, title: fork.title, createdAt: iso(fork.createdAt) })),
    researchState: view.researchState,
    ledger: view.ledger,
  };
}
