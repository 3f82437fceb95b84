import type { ActivationResult, RunSessionOptions } from '../engine/runner.ts';
import { QuarryError } from '../store/errors.ts';
import { sessionStatuses, type Session, type SessionStatus, type StepRecord } from '../store/store.ts';
import type { ServiceContext } from './service-context.ts';

function requireEngine(context: ServiceContext) {
  if (!context.runner || !context.workflows) throw new Error('This operation needs a runner and workflows in the service context.');
  return { runner: context.runner, workflows: context.workflows };
}

/** Refuses a session whose workflow version this Quarry cannot replay, offering a fork. */
export function checkWorkflowVersion(context: ServiceContext, session: Session): void {
  const { workflows } = requireEngine(context);
  const workflow = workflows.get(session.workflow.name);
  if (workflow.version === session.workflow.version) return;
  throw new QuarryError(
    'WORKFLOW_VERSION_MISMATCH',
    `Session ${session.id.slice(0, 8)} was started with ${workflow.name} version ${session.workflow.version}; this Quarry runs version ${workflow.version}. Fork it to continue under version ${workflow.version}: quarry fork ${session.id.slice(0, 8)} --from <step>.`,
    { details: { sessionId: session.id, sessionVersion: session.workflow.version, workflowVersion: workflow.version } },
  );
}

/** The first live step whose key is `from`, else the first live step of phase `from`. */
export function findRewindPoint(journal: readonly StepRecord[], from: string): StepRecord {
  const step = journal.find((record) => record.key === from) ?? journal.find((record) => record.phase === from);
  if (step) return step;
  const phases = [...new Set(journal.map((record) => record.phase).filter(Boolean))];
  throw new QuarryError(
    'STEP_NOT_FOUND',
    `No step or phase "${from}" in this session's current run. Phases: ${phases.join(', ') || 'none'}. See the steps with: quarry show <id> --steps.`,
    { details: { field: 'from', from } },
  );
}

export interface ResumeRequest {
  sessionId: string;
  /** Rewind in place from this phase or step key. */
  from?: string;
  /** Run a completed session again without rewinding. */
  force?: boolean;
}

/**
 * Checks that the session may resume now and builds the claim for it: the statuses it may be in,
 * and the rewind to perform under the new lease. Never creates a session.
 */
export async function planResume(context: ServiceContext, request: ResumeRequest): Promise<RunSessionOptions & { session: Session }> {
  const session = await context.store.getSession(request.sessionId, { ownerId: context.ownerId });
  checkWorkflowVersion(context, session);
  const short = session.id.slice(0, 8);
  if (session.status === 'running') {
    throw new QuarryError('SESSION_ALREADY_RUNNING', `Session ${short} is already running on worker "${session.lease?.workerId}". Watch it, or stop it first: quarry stop ${short}.`, {
      details: { sessionId: session.id },
    });
  }
  if (session.storedStatus === 'completed' && !request.from && !request.force) {
    throw new QuarryError(
      'SESSION_COMPLETED',
      `Session ${short} is completed. Ask a follow-up (quarry ask ${short} "…"), redo part of it (quarry resume ${short} --from <phase|step>), or run it again (--force).`,
      { details: { sessionId: session.id } },
    );
  }
  if (session.status === 'waiting' && !request.from) {
    throw new QuarryError('SESSION_WAITING', `Session ${short} is waiting for your input. Answer it: quarry ask ${short} "<answer>".`, {
      details: { sessionId: session.id },
    });
  }
  const fromStatuses: SessionStatus[] = sessionStatuses.filter((status) => status !== 'completed');
  if (request.from || request.force) fromStatuses.push('completed');
  let prepare: RunSessionOptions['prepare'];
  if (request.from) {
    const journal = await context.store.loadJournal(session.currentRunId!);
    const point = findRewindPoint(journal, request.from);
    prepare = async (lease) => {
      await context.store.supersedeSteps(lease, {
        runId: session.currentRunId!,
        fromSeq: point.seq,
        events: [{ type: 'run-rewind', data: { from: request.from, step: point.key } }],
      });
    };
  }
  return { session, ownerId: context.ownerId, fromStatuses, prepare };
}

/** Resumes in this process and waits for the activation to end (the CLI's foreground). */
export async function resumeSession(context: ServiceContext, request: ResumeRequest): Promise<ActivationResult> {
  const { runner } = requireEngine(context);
  const plan = await planResume(context, request);
  return runner.runSession(plan.session.id, plan);
}

/** Resumes through the queue: rewinds now if asked, and leaves the run to any worker. */
export async function queueResume(context: ServiceContext, request: ResumeRequest): Promise<Session> {
  const plan = await planResume(context, request);
  const lease = await context.store.claimSession({ sessionId: plan.session.id, workerId: 'queue', ttlMs: 60_000, fromStatuses: plan.fromStatuses, ownerId: context.ownerId });
  await plan.prepare?.(lease);
  return context.store.release(lease, { status: 'queued' });
}

/** Forks before a step of the current run into a new session under the installed workflow version. */
export async function forkSession(context: ServiceContext, request: { sessionId: string; from?: string; title?: string }): Promise<Session> {
  const { workflows } = requireEngine(context);
  const source = await context.store.getSession(request.sessionId, { ownerId: context.ownerId });
  let beforeStep: string | undefined;
  if (request.from) {
    const journal = await context.store.loadJournal(source.currentRunId!);
    beforeStep = findRewindPoint(journal, request.from).key;
  }
  const workflow = workflows.get(source.workflow.name);
  return context.store.forkSession({
    sessionId: source.id,
    beforeStep,
    ownerId: context.ownerId,
    title: request.title,
    workflow: { name: workflow.name, version: workflow.version },
  });
}

/** The input step the session waits on, or null. */
export async function pendingInput(context: ServiceContext, session: Session): Promise<StepRecord | null> {
  if (!session.currentRunId) return null;
  const journal = await context.store.loadJournal(session.currentRunId);
  return journal.find((step) => step.kind === 'input' && step.status !== 'completed') ?? null;
}

/**
 * Records a person's answer to the waiting request, once; delivering the same answer again is
 * recognized and changes nothing. The session is queued for any runner.
 */
export async function answerInput(context: ServiceContext, request: { sessionId: string; value: unknown }) {
  const session = await context.store.getSession(request.sessionId, { ownerId: context.ownerId });
  const pending = await pendingInput(context, session);
  if (!pending) {
    throw new QuarryError('SESSION_NOT_WAITING', `Session ${session.id.slice(0, 8)} is not waiting for input (it is ${session.status}).`, {
      details: { sessionId: session.id, status: session.status },
    });
  }
  const result = await context.store.deliverInput({ sessionId: session.id, runId: pending.runId, requestKey: pending.key, value: request.value, ownerId: context.ownerId });
  return { ...result, requestKey: pending.key };
}

/** Stops a session: at once when it runs in this process, else through its worker's heartbeat. */
export async function stopSession(context: ServiceContext, request: { sessionId: string }) {
  const session = await context.store.getSession(request.sessionId, { ownerId: context.ownerId });
  const result = await context.store.requestStop(session.id, { ownerId: context.ownerId });
  if (result === 'requested') context.runner?.stopSession(session.id);
  return result;
}
