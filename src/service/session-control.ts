import { claimOrTakeOver } from '../engine/lease.ts';
import type { ActivationResult, RunSessionOptions } from '../engine/runner.ts';
import { parseResearchSettings } from '../research/research-settings.ts';
import { QuarryError } from '../shared/errors.ts';
import { event } from '../shared/events.ts';
import { holderIsDead } from '../shared/process-identity.ts';
import { type Session, type SessionStatus, type StepRecord, sessionStatuses } from '../store/store.ts';
import { checkModels } from './preflight.ts';
import { boundedSettings, requestSources } from './research-request.ts';
import type { ServiceContext } from './service-context.ts';
import { runAdmission, sessionAdmission } from './user-limits.ts';

/** Refuses a session whose workflow version this Quarry cannot replay, offering a fork. */
/**
 * A LangGraph thread (kept by `quarry/langgraph`'s saver) is run by its graph, never by Quarry: a
 * follow-up, a resume or a fork would start a run no workflow here can run, and leave the thread
 * marked failed. Refused with what to do instead, changing nothing.
 */
export function refuseGraphThread(session: Session, action: string): void {
  if (session.workflow.name !== 'langgraph') return;
  throw new QuarryError(
    'INVALID_INPUT',
    `Session ${session.id.slice(0, 8)} is a LangGraph thread: its graph runs it (invoke the graph with its thread_id). Quarry cannot ${action} it; quarry show and export read it.`,
    { details: { sessionId: session.id, field: 'sessionId' } },
  );
}

export function checkWorkflowVersion(context: ServiceContext, session: Session): void {
  refuseGraphThread(session, 'resume');
  const workflow = context.workflows.get(session.workflow.name);
  if (workflow.version === session.workflow.version) return;
  throw new QuarryError(
    'WORKFLOW_VERSION_MISMATCH',
    `Session ${session.id.slice(0, 8)} was started with ${workflow.name} version ${session.workflow.version}; this Quarry runs version ${workflow.version}. Fork it to continue under version ${workflow.version}: quarry fork ${session.id.slice(0, 8)} --from <step>.`,
    { details: { sessionId: session.id, sessionVersion: session.workflow.version, workflowVersion: workflow.version } },
  );
}

/** The first live step whose key is `from`, else the first live step of phase `from`. */
export function findRewindPoint(
  journal: readonly StepRecord[],
  from: string,
  where = "this session's current run",
): StepRecord {
  const step = journal.find((record) => record.key === from) ?? journal.find((record) => record.phase === from);
  if (step) return step;
  const phases = [...new Set(journal.map((record) => record.phase).filter(Boolean))];
  throw new QuarryError(
    'STEP_NOT_FOUND',
    `No step or phase "${from}" in ${where}. Phases: ${phases.join(', ') || 'none'}. See the steps with: quarry show <id> --steps.`,
    { details: { field: 'from', from } },
  );
}

/** The journal of run number `turn` of the session. */
async function turnJournal(context: ServiceContext, session: Session, turn: number): Promise<StepRecord[]> {
  const run = (await context.store.listRuns(session.id)).find((each) => each.number === turn);
  if (!run)
    throw new QuarryError('RUN_NOT_FOUND', `Session ${session.id.slice(0, 8)} has no run ${turn}.`, {
      details: { field: 'turn', sessionId: session.id, run: turn },
    });
  return runJournal(context, session, run.id);
}

/** A run's journal as a rewind reads it: no superseded steps. */
async function runJournal(context: ServiceContext, session: Session, runId: string): Promise<StepRecord[]> {
  const steps = await context.store.listSteps(session.id);
  return steps.filter((step) => step.runId === runId && step.status !== 'superseded');
}

/**
 * The step of the current run a rewind or fork starts at. One that only an earlier run has (the
 * outline of the first report, after a follow-up) is refused naming that run, and how to fork from it.
 */
async function findInCurrentRun(context: ServiceContext, session: Session, from: string): Promise<StepRecord> {
  const journal = await context.store.loadCurrentJournal(session.id);
  try {
    return findRewindPoint(journal, from);
  } catch (error) {
    const runs = await context.store.listRuns(session.id);
    const steps = await context.store.listSteps(session.id);
    for (const run of [...runs].reverse()) {
      if (run.id === session.currentRunId) continue;
      const inRun = steps.filter((step) => step.runId === run.id && step.status !== 'superseded');
      if (!inRun.some((step) => step.key === from || step.phase === from)) continue;
      throw new QuarryError(
        'STEP_NOT_FOUND',
        `"${from}" is in run ${run.number} of session ${session.id.slice(0, 8)}, before its latest turn; a rewind works within the current run (${runs.length}). Fork from it instead: quarry fork ${session.id.slice(0, 8)} --turn ${run.number} --from ${from} (API: "turn": ${run.number}).`,
        { details: { field: 'from', from, run: run.number } },
      );
    }
    throw error;
  }
}

export interface ResumeRequest {
  sessionId: string;
  /** Rewind in place from this phase or step key. */
  from?: string;
  /** Run a completed session again, from the start, as a new report version. */
  force?: boolean;
  /** Documents folders to add to the session's own (or to use instead, with `replaceSources`). */
  docs?: string[];
  /** Web providers to add (or to use instead, with `replaceSources`). */
  search?: string[];
  replaceSources?: boolean;
}

/** The session's settings with the request's sources applied, validated; null when nothing changes. */
function sourcesChange(context: ServiceContext, session: Session, request: ResumeRequest) {
  if (request.docs === undefined && request.search === undefined) return null;
  const current = parseResearchSettings(session.settings);
  const added = requestSources(context, { docs: request.docs ?? [], search: request.search ?? [] });
  const settings = {
    ...session.settings,
    docs: request.replaceSources ? added.docs : [...new Set([...current.docs, ...added.docs])],
    search: request.replaceSources ? added.search : [...new Set([...current.search, ...added.search])],
  };
  parseResearchSettings(settings);
  return { settings, newDocs: added.docs };
}

/**
 * Checks that the session may resume now and builds the claim for it: the statuses it may be in,
 * and what to do under the new lease (new sources, a rewind). Nothing is written until the claim
 * succeeds, so a refused resume changes nothing.
 */
export async function planResume(
  context: ServiceContext,
  request: ResumeRequest,
): Promise<RunSessionOptions & { session: Session }> {
  let session = await context.store.getSession(request.sessionId);
  checkWorkflowVersion(context, session);
  const short = session.id.slice(0, 8);
  // A session whose process died on this machine is resumed at once (its lease is taken over).
  if (session.status === 'running' && !holderIsDead(session.lease)) {
    throw new QuarryError(
      'SESSION_ALREADY_RUNNING',
      `Session ${short} is already running on worker "${session.lease?.workerId}". Watch it, or stop it first: quarry stop ${short}.`,
      { details: { sessionId: session.id } },
    );
  }
  if (session.storedStatus === 'completed' && !request.from && !request.force) {
    throw new QuarryError(
      'SESSION_COMPLETED',
      `Session ${short} is completed. Ask a follow-up (quarry ask ${short} "…"), redo part of it (quarry resume ${short} --from <phase|step>), or run it again (--force).`,
      { details: { sessionId: session.id } },
    );
  }
  if (session.status === 'waiting' && !request.from) {
    throw new QuarryError(
      'SESSION_WAITING',
      `Session ${short} is waiting for your input. Answer it: quarry ask ${short} "<answer>".`,
      { details: { sessionId: session.id } },
    );
  }
  const sourced = sourcesChange(context, session, request);
  checkModels(context, parseResearchSettings(sourced?.settings ?? session.settings));
  // The server's budgets bind every run: settings changed since (or imported without them) are
  // brought within its ceilings as the run starts.
  const bounded = boundedSettings(context, sourced?.settings ?? session.settings);
  const change =
    sourced || bounded !== session.settings ? { settings: bounded, newDocs: sourced?.newDocs ?? [] } : null;
  if (change) await context.indexer.ensure(change.newDocs);
  const point = request.from ? await findInCurrentRun(context, session, request.from) : null;
  if (request.force && !request.from && session.storedStatus === 'completed') {
    // Run it again: a new run of the original question, so the old report stays as a version.
    const first = (await context.store.listRuns(session.id))[0];
    // Parked, not queued: this resume claims it next, before any worker could take it.
    // Checked against the active runs limit here, so a refused rerun adds no run.
    await context.store.startRun({
      sessionId: session.id,
      kind: 'rerun',
      input: first?.input ?? { question: session.question },
      status: 'interrupted',
      admission: runAdmission(context),
    });
    session = await context.store.getSession(session.id);
  }
  const fromStatuses: SessionStatus[] = sessionStatuses.filter((status) => status !== 'completed');
  if (point) fromStatuses.push('completed');
  const from = request.from;
  const runId = session.currentRunId;
  const prepare: RunSessionOptions['prepare'] = async (lease) => {
    if (change) await context.store.updateSession(session.id, { settings: change.settings });
    if (point && from && runId) {
      await context.store.supersedeSteps(lease, {
        runId,
        fromSeq: point.seq,
        events: [event('run-rewind', { from, step: point.key })],
      });
    }
  };
  return { session, ownerId: context.store.ownerId, fromStatuses, prepare };
}

/** Resumes in this process and waits for the activation to end (the CLI's foreground). */
export async function resumeSession(context: ServiceContext, request: ResumeRequest): Promise<ActivationResult> {
  if (!context.runner) throw new Error('resumeSession needs a runner in the service context.');
  const plan = await planResume(context, request);
  return context.runner.runSession(plan.session.id, plan);
}

/** Resumes through the queue: applies the plan under a short claim, and leaves the run to any worker. */
export async function queueResume(context: ServiceContext, request: ResumeRequest): Promise<Session> {
  const plan = await planResume(context, request);
  const lease = await claimOrTakeOver(context.store, {
    sessionId: plan.session.id,
    workerId: 'queue',
    ttlMs: 60_000,
    fromStatuses: plan.fromStatuses,
    admission: runAdmission(context),
  });
  try {
    await plan.prepare?.(lease);
  } catch (error) {
    await context.store.release(lease, { status: 'interrupted' }).catch(() => undefined);
    throw error;
  }
  return context.store.release(lease, { status: 'queued' });
}

/** Forks before a step of the current run into a new session under the installed workflow version. */
export async function forkSession(
  context: ServiceContext,
  request: {
    sessionId: string;
    from?: string;
    /** An earlier turn (run number): the copy ends with it, or is cut before `from` within it. */
    turn?: number;
    title?: string;
    run?: boolean;
  },
): Promise<Session> {
  const source = await context.store.getSession(request.sessionId);
  refuseGraphThread(source, 'fork');
  // Everything the run needs is checked before the fork exists, so a refusal leaves nothing behind.
  if (request.run) checkModels(context, parseResearchSettings(source.settings));
  let beforeStep: string | undefined;
  if (request.from) {
    beforeStep =
      request.turn === undefined
        ? (await findInCurrentRun(context, source, request.from)).key
        : findRewindPoint(await turnJournal(context, source, request.turn), request.from, `run ${request.turn}`).key;
  }
  const workflow = context.workflows.get(source.workflow.name);
  const fork = await context.store.forkSession({
    sessionId: source.id,
    beforeStep,
    throughRun: request.turn,
    title: request.title,
    workflow: { name: workflow.name, version: workflow.version },
    admission: sessionAdmission(context),
  });
  // A fork of a finished session, taken whole, has nothing left to run.
  if (!request.run || fork.status === 'completed') return fork;
  try {
    return await queueResume(context, { sessionId: fork.id });
  } catch (error) {
    // Refused to run (the active runs limit, reached meanwhile): no fork is left behind.
    await context.store.deleteSession(fork.id).catch(() => undefined);
    throw error;
  }
}

/** The input step the session waits on, or null: the one place that answers "what is it waiting for". */
export async function pendingInput(context: ServiceContext, session: Session): Promise<StepRecord | null> {
  const journal = await context.store.loadCurrentJournal(session.id);
  return journal.find((step) => step.kind === 'input' && step.status !== 'completed') ?? null;
}

/**
 * Records a person's answer to the waiting request, once; delivering the same answer again is
 * recognized and changes nothing. The session is queued for any runner.
 */
export async function answerInput(context: ServiceContext, request: { sessionId: string; value: unknown }) {
  const session = await context.store.getSession(request.sessionId);
  const pending = await pendingInput(context, session);
  if (!pending) {
    throw new QuarryError(
      'SESSION_NOT_WAITING',
      `Session ${session.id.slice(0, 8)} is not waiting for input (it is ${session.status}).`,
      { details: { sessionId: session.id, status: session.status } },
    );
  }
  const result = await context.store.deliverInput({
    sessionId: session.id,
    runId: pending.runId,
    requestKey: pending.key,
    value: request.value,
  });
  return { ...result, requestKey: pending.key };
}

/** Stops a session: at once when it runs in this process, else through its worker's heartbeat. */
export async function stopSession(context: ServiceContext, request: { sessionId: string; reason?: string }) {
  const session = await context.store.getSession(request.sessionId);
  if (session.status === 'running' && holderIsDead(session.lease)) {
    // Nobody is left to hear the request: end the dead process's run here, at once.
    const lease = await claimOrTakeOver(context.store, { sessionId: session.id, workerId: 'stop', ttlMs: 30_000 });
    await context.store.release(lease, {
      status: 'interrupted',
      events: [event('run-end', { status: 'interrupted', reason: 'its process had died; stopped' })],
    });
    return 'interrupted' as const;
  }
  const result = await context.store.requestStop(session.id, { reason: request.reason });
  if (result === 'requested') context.runner?.stopSession(session.id, request.reason);
  return result;
}
