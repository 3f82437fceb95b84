import { QuarryError } from '../../shared/errors.ts';
import type {
  BeginStepInput,
  CompleteStepInput,
  EventInput,
  FailStepInput,
  Fence,
  RecordStepInput,
  StepKind,
  StepRecord,
} from '../store.ts';
import { begunStep, blobOf, conflict, encodeJson, payloadOf, stepNotFound, toStepRecord } from './codec.ts';
import { fenceRefusal, type SqlContext } from './context.ts';
import { STEP_RETURNING } from './journal-select.ts';
import {
  all,
  blobStatementsWhen,
  type Condition,
  either,
  eventStatements,
  fenced,
  lockFenced,
  not,
  sessionUpdate,
} from './script-parts.ts';
import type { Row, ScriptStatement } from './sql-driver.ts';

/**
 * The journal's writes, each one script (`SqlDriver.script`): one round trip on PostgreSQL. Every
 * statement says when it applies, reading the step's row as it was before the write, and the
 * statements that change the step's own row come last; so a refused write (a lost lease, a step
 * already completed, a run that is not there) writes nothing, and the reason is read after.
 */

const OPEN = "status IN ('running', 'failed')";
// Every lookup of a step by key says it is live: SQLite uses the live steps' index on (run, key)
// only for a condition that repeats the index's own (`status = 'completed'` alone scanned the run).
const LIVE = "status <> 'superseded'";

/** The live step `key` of the run is in one of these states (`live`: any). */
function stepIs(runId: string, key: string, states: 'open' | 'completed' | 'live'): Condition {
  const status = states === 'open' ? ` AND ${OPEN}` : states === 'completed' ? " AND status = 'completed'" : '';
  return {
    sql: `EXISTS (SELECT 1 FROM steps WHERE run_id = ? AND key = ? AND ${LIVE}${status})`,
    params: [runId, key],
  };
}

/** The first incomplete live step of the run but `except`, as the session's resume point. */
function firstOpenStep(runId: string, except?: string): Condition {
  return {
    sql: `(SELECT key FROM steps WHERE run_id = ? AND ${OPEN}${except === undefined ? '' : ' AND key <> ?'} ORDER BY seq LIMIT 1)`,
    params: except === undefined ? [runId] : [runId, except],
  };
}

/** `column = expression` for the session's current run only (an earlier run's steps leave its counters alone). */
function forCurrentRun(runId: string, column: string, value: Condition): Condition {
  return {
    sql: `${column} = CASE WHEN current_run_id = ? THEN ${value.sql} ELSE ${column} END`,
    params: [runId, ...value.params],
  };
}

const joined = (...parts: Condition[]): Condition => ({
  sql: parts.map((part) => part.sql).join(', '),
  params: parts.flatMap((part) => part.params),
});

/** The live step's status now (null: there is none), to say why a write was refused. */
async function liveStatus(ctx: SqlContext, runId: string, key: string): Promise<string | null> {
  const rows = await ctx.driver.query<{ status: string }>(
    `SELECT status FROM steps WHERE run_id = ? AND key = ? AND ${LIVE}`,
    [runId, key],
  );
  return rows[0]?.status ?? null;
}

interface BeginScript {
  statements: ScriptStatement[];
  /** Indexes of the statements that return the step when it was begun again, or begun first. */
  again: number;
  first: number;
}

/** Begins the step: another attempt of an open step, or a new step with the run's next `seq`. */
function beginScript(ctx: SqlContext, fence: Fence, input: BeginStepInput, events: readonly EventInput[]): BeginScript {
  const { runId, key } = input;
  const sessionId = fence.sessionId;
  const runIsSessions = {
    sql: 'EXISTS (SELECT 1 FROM runs WHERE id = ? AND session_id = ?)',
    params: [runId, sessionId],
  };
  const goesAhead = all(
    fenced(fence),
    not(stepIs(runId, key, 'completed')),
    either(stepIs(runId, key, 'open'), runIsSessions),
  );
  const payload = payloadOf(input.input);
  const prompt = input.prompt ? blobOf(Buffer.from(encodeJson(input.prompt)!, 'utf8')) : null;
  const counters = joined(
    // A new step has the run's highest seq: it is the resume point only when no step is open.
    forCurrentRun(runId, 'next_step', {
      sql: `COALESCE(${firstOpenStep(runId).sql}, ?)`,
      params: [...firstOpenStep(runId).params, key],
    }),
    {
      sql: `known_steps = known_steps + CASE WHEN current_run_id = ? AND NOT ${stepIs(runId, key, 'live').sql} THEN 1 ELSE 0 END`,
      params: [runId, ...stepIs(runId, key, 'live').params],
    },
  );
  const isNew = all(fenced(fence), not(stepIs(runId, key, 'live')));
  const statements: ScriptStatement[] = [
    ...blobStatementsWhen(ctx, sessionId, [payload.blob, prompt], goesAhead),
    sessionUpdate(ctx, sessionId, counters, events.length, goesAhead),
    ...eventStatements(ctx, sessionId, events, goesAhead),
    {
      sql: `UPDATE steps SET status = 'running', attempts = attempts + 1, input = ?, input_blob = ?, prompt_blob = ?,
          error_code = NULL, error_message = NULL, started_at = ${ctx.now}, ended_at = NULL
        WHERE run_id = ? AND key = ? AND ${LIVE} AND ${OPEN} AND ${fenced(fence).sql} RETURNING seq, attempts, started_at, phase, kind`,
      params: [payload.inline, payload.blob?.hash ?? null, prompt?.hash ?? null, runId, key, ...fenced(fence).params],
    },
    {
      sql: `UPDATE runs SET next_seq = next_seq + 1 WHERE id = ? AND session_id = ? AND ${isNew.sql}`,
      params: [runId, sessionId, ...isNew.params],
    },
    {
      sql: `INSERT INTO steps (run_id, session_id, key, seq, phase, kind, status, attempts, input, input_blob, prompt_blob, started_at)
        SELECT ?, ?, ?, r.next_seq, ?, ?, 'running', 1, ?, ?, ?, ${ctx.now} FROM runs r
        WHERE r.id = ? AND r.session_id = ? AND ${isNew.sql} RETURNING seq, attempts, started_at`,
      params: [
        runId,
        sessionId,
        key,
        input.phase ?? null,
        input.kind,
        payload.inline,
        payload.blob?.hash ?? null,
        prompt?.hash ?? null,
        runId,
        sessionId,
        ...isNew.params,
      ],
    },
  ];
  return { statements, again: statements.length - 3, first: statements.length - 1 };
}

/** Completes an open step with its output (the step's row last: the rest reads it still open). */
function completeScript(
  ctx: SqlContext,
  fence: Fence,
  input: CompleteStepInput,
): { statements: ScriptStatement[]; completed: number } {
  const { runId, key } = input;
  const goesAhead = all(fenced(fence), stepIs(runId, key, 'open'));
  const payload = payloadOf(input.output);
  const counters = joined(
    forCurrentRun(runId, 'next_step', firstOpenStep(runId, key)),
    forCurrentRun(runId, 'completed_steps', { sql: 'completed_steps + 1', params: [] }),
    forCurrentRun(runId, 'progress_phase', {
      sql: `(SELECT phase FROM steps WHERE run_id = ? AND key = ? AND ${LIVE})`,
      params: [runId, key],
    }),
  );
  const events = input.events ?? [];
  const statements: ScriptStatement[] = [
    ...blobStatementsWhen(ctx, fence.sessionId, [payload.blob], goesAhead),
    sessionUpdate(ctx, fence.sessionId, counters, events.length, goesAhead),
    ...eventStatements(ctx, fence.sessionId, events, goesAhead),
    {
      sql: `UPDATE steps SET status = 'completed', output = ?, output_blob = ?, usage = ?, ended_at = ${ctx.now}
        WHERE run_id = ? AND key = ? AND ${LIVE} AND ${OPEN} AND ${fenced(fence).sql} RETURNING ${STEP_RETURNING}`,
      params: [
        payload.inline,
        payload.blob?.hash ?? null,
        input.usage ? encodeJson(input.usage) : null,
        runId,
        key,
        ...fenced(fence).params,
      ],
    },
  ];
  return { statements, completed: statements.length - 1 };
}

/** What a begun step's statement returned, as numbers. */
const written = (row: Row) => ({
  seq: Number(row.seq),
  attempts: Number(row.attempts),
  started_at: Number(row.started_at),
});

const alreadyCompleted = (runId: string, key: string) =>
  conflict(`Step "${key}" of run "${runId}" is already completed.`, { runId, key });

/** Why a step write found its step missing or completed (or its run missing, for a new step). */
function stepRefusal(status: string | null, fence: Fence, runId: string, key: string, beginning: boolean): Error {
  if (status === 'completed') return alreadyCompleted(runId, key);
  if (beginning)
    return new QuarryError('RUN_NOT_FOUND', `No run "${runId}" in session "${fence.sessionId}".`, {
      details: { runId },
    });
  return stepNotFound(runId, key);
}

export async function beginStep(ctx: SqlContext, fence: Fence, input: BeginStepInput): Promise<StepRecord> {
  const begin = beginScript(ctx, fence, input, input.events ?? []);
  const results = await ctx.driver.script([lockFenced(ctx, fence), ...begin.statements]);
  if (results[0]!.length === 0) throw await fenceRefusal(ctx.driver, fence);
  const again = results[begin.again + 1]![0];
  const first = results[begin.first + 1]![0];
  if (again)
    return begunStep(
      { ...input, phase: (again.phase as string | null) ?? null, kind: again.kind as StepKind },
      written(again),
    );
  if (first) return begunStep({ ...input, phase: input.phase ?? null }, written(first));
  throw stepRefusal(await liveStatus(ctx, input.runId, input.key), fence, input.runId, input.key, true);
}

export async function completeStep(ctx: SqlContext, fence: Fence, input: CompleteStepInput): Promise<StepRecord> {
  const complete = completeScript(ctx, fence, input);
  const results = await ctx.driver.script([lockFenced(ctx, fence), ...complete.statements]);
  if (results[0]!.length === 0) throw await fenceRefusal(ctx.driver, fence);
  const step = results[complete.completed + 1]![0];
  if (!step) throw stepRefusal(await liveStatus(ctx, input.runId, input.key), fence, input.runId, input.key, false);
  return toStepRecord(step);
}

/** `beginStep` and `completeStep` as one script. */
export async function recordStep(ctx: SqlContext, fence: Fence, input: RecordStepInput): Promise<StepRecord> {
  const begin = beginScript(ctx, fence, input, []);
  const complete = completeScript(ctx, fence, input);
  const results = await ctx.driver.script([lockFenced(ctx, fence), ...begin.statements, ...complete.statements]);
  if (results[0]!.length === 0) throw await fenceRefusal(ctx.driver, fence);
  const step = results[begin.statements.length + complete.completed + 1]![0];
  if (!step) throw stepRefusal(await liveStatus(ctx, input.runId, input.key), fence, input.runId, input.key, true);
  return toStepRecord(step);
}

export async function failStep(ctx: SqlContext, fence: Fence, input: FailStepInput): Promise<StepRecord> {
  const { runId, key } = input;
  const goesAhead = all(fenced(fence), stepIs(runId, key, 'open'));
  const events = input.events ?? [];
  // A failed step stays open: the resume point is read as it stands.
  const results = await ctx.driver.script([
    lockFenced(ctx, fence),
    sessionUpdate(
      ctx,
      fence.sessionId,
      forCurrentRun(runId, 'next_step', firstOpenStep(runId)),
      events.length,
      goesAhead,
    ),
    ...eventStatements(ctx, fence.sessionId, events, goesAhead),
    {
      sql: `UPDATE steps SET status = 'failed', error_code = ?, error_message = ?, ended_at = ${ctx.now}
        WHERE run_id = ? AND key = ? AND ${LIVE} AND ${OPEN} AND ${fenced(fence).sql} RETURNING ${STEP_RETURNING}`,
      params: [input.error.code, input.error.message, runId, key, ...fenced(fence).params],
    },
  ]);
  if (results[0]!.length === 0) throw await fenceRefusal(ctx.driver, fence);
  const step = results.at(-1)![0];
  if (step) return toStepRecord(step);
  if ((await liveStatus(ctx, runId, key)) === 'completed')
    throw conflict(`Step "${key}" is already completed.`, { runId, key });
  throw stepNotFound(runId, key);
}
