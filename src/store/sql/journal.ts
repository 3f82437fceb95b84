import { QuarryError } from '../../shared/errors.ts';
import type {
  BeginStepInput,
  CompleteStepInput,
  EventInput,
  FailStepInput,
  Fence,
  ListStepsOptions,
  OwnerScope,
  RecordStepInput,
  StepDetail,
  StepPrompt,
  StepRecord,
  StepUsage,
  StepUsageRecord,
} from '../store.ts';
import {
  asStored,
  begunStep,
  conflict,
  decodeJson,
  encodeJson,
  putBlobInTx,
  stepNotFound,
  storePayload,
  toStepRecord,
} from './codec.ts';
import { checkFence, readSession, type SqlContext } from './context.ts';
import { appendEventsInTx } from './events.ts';
import { isDamage, salvageSteps } from './salvage.ts';
import type { SqlExecutor } from './sql-driver.ts';

type Row = Record<string, unknown>;

/** Blob bytes of a payload column, looked up only for rows that have one. */
const blobData = (column: string) =>
  `CASE WHEN s.${column}_blob IS NULL THEN NULL ELSE (SELECT data FROM blobs WHERE hash = s.${column}_blob) END`;

// Named columns and scalar subqueries instead of `s.*` and LEFT JOINs: loading a 10,000-step
// journal on SQLite takes about half the time (bench/engine-resume.ts).
const STEP_COLUMNS =
  's.run_id, s.key, s.seq, s.phase, s.kind, s.status, s.attempts, s.input, s.input_blob, s.output, s.output_blob, s.error_code, s.error_message, s.usage, s.started_at, s.ended_at';
const JOURNAL_SELECT = `SELECT ${STEP_COLUMNS}, ${blobData('input')} AS input_data, ${blobData('output')} AS output_data FROM steps s`;

async function readLiveStep(tx: SqlExecutor, runId: string, key: string): Promise<StepRecord | null> {
  const rows = await tx.query(`${JOURNAL_SELECT} WHERE s.run_id = ? AND s.key = ? AND s.status <> 'superseded'`, [
    runId,
    key,
  ]);
  return rows[0] ? toStepRecord(rows[0]) : null;
}

/** Keeps the session's `next_step` (first incomplete live step) current, for listings. */
async function refreshNextStep(
  _ctx: SqlContext,
  tx: SqlExecutor,
  sessionId: string,
  runId: string,
  counters = '',
  counterParams: unknown[] = [],
): Promise<void> {
  // One statement (one round trip): the partial index on incomplete steps makes the subquery cheap.
  await tx.query(
    `UPDATE sessions SET next_step = (SELECT key FROM steps WHERE run_id = ? AND status IN ('running', 'failed') ORDER BY seq LIMIT 1)${counters}
     WHERE id = ? AND current_run_id = ?`,
    [runId, ...counterParams, sessionId, runId],
  );
}

async function beginStepInTx(
  ctx: SqlContext,
  tx: SqlExecutor,
  fence: Fence,
  input: BeginStepInput,
): Promise<StepRecord> {
  const existing = await readLiveStep(tx, input.runId, input.key);
  if (existing?.status === 'completed') {
    throw conflict(`Step "${input.key}" of run "${input.runId}" is already completed.`, {
      runId: input.runId,
      key: input.key,
    });
  }
  const payload = await storePayload(tx, ctx.now, fence.sessionId, input.input);
  const promptBlob = input.prompt
    ? await putBlobInTx(tx, ctx.now, fence.sessionId, Buffer.from(encodeJson(input.prompt)!, 'utf8'))
    : null;
  let written: { seq: number; attempts: number; started_at: number };
  if (existing) {
    [written] = (await tx.query<typeof written>(
      `UPDATE steps SET status = 'running', attempts = attempts + 1, input = ?, input_blob = ?, prompt_blob = ?, error_code = NULL,
         error_message = NULL, started_at = ${ctx.now}, ended_at = NULL
       WHERE run_id = ? AND key = ? AND status <> 'superseded' RETURNING seq, attempts, started_at`,
      [payload.inline, payload.blob, promptBlob, input.runId, input.key],
    )) as [typeof written];
    await refreshNextStep(ctx, tx, fence.sessionId, input.runId);
  } else {
    const seqRows = await tx.query<{ next_seq: number }>(
      'UPDATE runs SET next_seq = next_seq + 1 WHERE id = ? AND session_id = ? RETURNING next_seq',
      [input.runId, fence.sessionId],
    );
    if (!seqRows[0])
      throw new QuarryError('RUN_NOT_FOUND', `No run "${input.runId}" in session "${fence.sessionId}".`, {
        details: { runId: input.runId },
      });
    [written] = (await tx.query<typeof written>(
      `INSERT INTO steps (run_id, session_id, key, seq, phase, kind, status, attempts, input, input_blob, prompt_blob, started_at)
       VALUES (?, ?, ?, ?, ?, ?, 'running', 1, ?, ?, ?, ${ctx.now}) RETURNING seq, attempts, started_at`,
      [
        input.runId,
        fence.sessionId,
        input.key,
        seqRows[0].next_seq,
        input.phase ?? null,
        input.kind,
        payload.inline,
        payload.blob,
        promptBlob,
      ],
    )) as [typeof written];
    await refreshNextStep(ctx, tx, fence.sessionId, input.runId, ', known_steps = known_steps + 1');
  }
  await appendEventsInTx(ctx, tx, fence.sessionId, input.events ?? []);
  return begunStep(
    {
      ...input,
      phase: existing ? existing.phase : (input.phase ?? null),
      kind: existing ? existing.kind : input.kind,
    },
    written,
  );
}

async function completeStepInTx(
  ctx: SqlContext,
  tx: SqlExecutor,
  fence: Fence,
  input: CompleteStepInput,
): Promise<StepRecord> {
  const existing = await readLiveStep(tx, input.runId, input.key);
  if (!existing) throw stepNotFound(input.runId, input.key);
  if (existing.status === 'completed') {
    throw conflict(`Step "${input.key}" of run "${input.runId}" is already completed.`, {
      runId: input.runId,
      key: input.key,
    });
  }
  const payload = await storePayload(tx, ctx.now, fence.sessionId, input.output);
  const [ended] = await tx.query<{ ended_at: number }>(
    `UPDATE steps SET status = 'completed', output = ?, output_blob = ?, usage = ?, ended_at = ${ctx.now}
     WHERE run_id = ? AND key = ? AND status <> 'superseded' RETURNING ended_at`,
    [payload.inline, payload.blob, input.usage ? encodeJson(input.usage) : null, input.runId, input.key],
  );
  await refreshNextStep(
    ctx,
    tx,
    fence.sessionId,
    input.runId,
    ', completed_steps = completed_steps + 1, progress_phase = ?',
    [existing.phase],
  );
  await appendEventsInTx(ctx, tx, fence.sessionId, input.events ?? []);
  return {
    ...existing,
    status: 'completed',
    output: asStored(input.output),
    usage: input.usage ? (asStored(input.usage) as StepRecord['usage']) : null,
    endedAt: Number(ended!.ended_at),
  };
}

export function beginStep(ctx: SqlContext, fence: Fence, input: BeginStepInput): Promise<StepRecord> {
  return ctx.driver.transaction(async (tx) => {
    await checkFence(ctx, tx, fence);
    return beginStepInTx(ctx, tx, fence, input);
  });
}

export function completeStep(ctx: SqlContext, fence: Fence, input: CompleteStepInput): Promise<StepRecord> {
  return ctx.driver.transaction(async (tx) => {
    await checkFence(ctx, tx, fence);
    return completeStepInTx(ctx, tx, fence, input);
  });
}

export function recordStep(ctx: SqlContext, fence: Fence, input: RecordStepInput): Promise<StepRecord> {
  return ctx.driver.transaction(async (tx) => {
    await checkFence(ctx, tx, fence);
    await beginStepInTx(ctx, tx, fence, { ...input, events: [] });
    return completeStepInTx(ctx, tx, fence, input);
  });
}

export function failStep(ctx: SqlContext, fence: Fence, input: FailStepInput): Promise<StepRecord> {
  return ctx.driver.transaction(async (tx) => {
    await checkFence(ctx, tx, fence);
    const existing = await readLiveStep(tx, input.runId, input.key);
    if (!existing) throw stepNotFound(input.runId, input.key);
    if (existing.status === 'completed')
      throw conflict(`Step "${input.key}" is already completed.`, { runId: input.runId, key: input.key });
    await tx.query(
      `UPDATE steps SET status = 'failed', error_code = ?, error_message = ?, ended_at = ${ctx.now}
       WHERE run_id = ? AND key = ? AND status <> 'superseded'`,
      [input.error.code, input.error.message, input.runId, input.key],
    );
    await refreshNextStep(ctx, tx, fence.sessionId, input.runId);
    await appendEventsInTx(ctx, tx, fence.sessionId, input.events ?? []);
    return (await readLiveStep(tx, input.runId, input.key))!;
  });
}

export function supersedeSteps(
  ctx: SqlContext,
  fence: Fence,
  input: { runId: string; fromSeq: number; events?: EventInput[] },
): Promise<number> {
  return ctx.driver.transaction(async (tx) => {
    await checkFence(ctx, tx, fence);
    await tx.query(
      `DELETE FROM inbox WHERE run_id = ? AND request_key IN
         (SELECT key FROM steps WHERE run_id = ? AND seq >= ? AND kind = 'input' AND status <> 'superseded')`,
      [input.runId, input.runId, input.fromSeq],
    );
    const changed = await tx.query(
      "UPDATE steps SET status = 'superseded' WHERE run_id = ? AND session_id = ? AND seq >= ? AND status <> 'superseded' RETURNING id",
      [input.runId, fence.sessionId, input.fromSeq],
    );
    await tx.query("UPDATE runs SET status = 'open', output = NULL, ended_at = NULL WHERE id = ? AND session_id = ?", [
      input.runId,
      fence.sessionId,
    ]);
    // Rare (a rewind), so recount from the journal instead of adjusting counters.
    const counts = await tx.query<{ known: number; completed: number }>(
      `SELECT COUNT(*) AS known, COALESCE(SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END), 0) AS completed
       FROM steps WHERE run_id = ? AND status <> 'superseded'`,
      [input.runId],
    );
    const phase = await tx.query<{ phase: string | null }>(
      "SELECT phase FROM steps WHERE run_id = ? AND status = 'completed' ORDER BY seq DESC LIMIT 1",
      [input.runId],
    );
    await tx.query(
      'UPDATE sessions SET known_steps = ?, completed_steps = ?, progress_phase = ? WHERE id = ? AND current_run_id = ?',
      [
        Number(counts[0]?.known ?? 0),
        Number(counts[0]?.completed ?? 0),
        phase[0]?.phase ?? null,
        fence.sessionId,
        input.runId,
      ],
    );
    await refreshNextStep(ctx, tx, fence.sessionId, input.runId);
    await appendEventsInTx(ctx, tx, fence.sessionId, input.events ?? []);
    return changed.length;
  });
}

export async function loadJournal(
  ctx: SqlContext,
  runId: string,
  options: { includeSuperseded?: boolean } = {},
): Promise<StepRecord[]> {
  const filter = options.includeSuperseded ? '' : " AND s.status <> 'superseded'";
  try {
    const rows = await ctx.driver.query(`${JOURNAL_SELECT} WHERE s.run_id = ?${filter} ORDER BY s.seq`, [runId]);
    return rows.map(toStepRecord);
  } catch (error) {
    const salvaged = isDamage(error)
      ? await salvageSteps(ctx, [runId], JOURNAL_SELECT, (row) => live(toStepRecord(row), options), options)
      : null;
    if (!salvaged) throw error;
    return salvaged;
  }
}

/** A step as a listing without superseded steps keeps it (null: left out). */
function live<T extends StepRecord>(step: T, options: { includeSuperseded?: boolean }): T | null {
  return options.includeSuperseded || step.status !== 'superseded' ? step : null;
}

/** The ids of a session's runs, in their order (for reading a damaged journal run by run). */
async function runIdsOf(ctx: SqlContext, sessionId: string, runId?: string): Promise<string[]> {
  const rows = await ctx.driver.query<{ id: string }>('SELECT id FROM runs WHERE session_id = ? ORDER BY number', [
    sessionId,
  ]);
  return rows.map((row) => row.id).filter((id) => runId === undefined || id === runId);
}

function withPrompt(row: Row): StepDetail {
  const step = toStepRecord(row);
  if (!row.prompt_data) return { ...step, prompt: null };
  try {
    return { ...step, prompt: decodeJson(Buffer.from(row.prompt_data as Uint8Array).toString('utf8')) as StepPrompt };
  } catch (error) {
    const damage = { ...step.damage, prompt: `it does not parse as JSON (${(error as Error).message})` };
    return { ...step, prompt: null, damage };
  }
}

export async function listSteps(
  ctx: SqlContext,
  sessionId: string,
  options: ListStepsOptions & OwnerScope = {},
): Promise<StepDetail[]> {
  await readSession(ctx, ctx.driver, sessionId, options);
  const prompt = options.includePrompts ? `, ${blobData('prompt')} AS prompt_data` : '';
  let sql = `SELECT ${STEP_COLUMNS}, ${blobData('input')} AS input_data, ${blobData('output')} AS output_data${prompt}
    FROM steps s JOIN runs r ON r.id = s.run_id WHERE s.session_id = ?`;
  const params: unknown[] = [sessionId];
  if (options.runId !== undefined) {
    sql += ' AND s.run_id = ?';
    params.push(options.runId);
  }
  if (options.phase !== undefined) {
    sql += ' AND s.phase = ?';
    params.push(options.phase);
  }
  if (!options.includeSuperseded) sql += " AND s.status <> 'superseded'";
  try {
    const rows = await ctx.driver.query(`${sql} ORDER BY r.number, s.seq`, params);
    return rows.map(withPrompt);
  } catch (error) {
    if (!isDamage(error)) throw error;
    const select = `SELECT ${STEP_COLUMNS}, ${blobData('input')} AS input_data, ${blobData('output')} AS output_data${prompt} FROM steps s`;
    const salvaged = await salvageSteps(
      ctx,
      await runIdsOf(ctx, sessionId, options.runId),
      select,
      (row) => {
        const step = live(withPrompt(row), options);
        return step && (options.phase === undefined || step.phase === options.phase) ? step : null;
      },
      options,
    );
    if (!salvaged) throw error;
    return options.phase === undefined ? salvaged : salvaged.filter((step) => step.phase === options.phase);
  }
}

export async function listStepUsage(
  ctx: SqlContext,
  sessionId: string,
  scope: OwnerScope = {},
): Promise<StepUsageRecord[]> {
  await readSession(ctx, ctx.driver, sessionId, scope);
  const usageOf = (row: { key: string; usage: string | null }) => ({
    key: row.key,
    usage: row.usage ? (decodeJson(row.usage) as StepUsage) : null,
  });
  try {
    const rows = await ctx.driver.query<{ key: string; usage: string | null }>(
      `SELECT s.key, s.usage FROM steps s JOIN runs r ON r.id = s.run_id
       WHERE s.session_id = ? AND (s.status = 'completed' OR (s.status = 'superseded' AND s.ended_at IS NOT NULL AND s.error_code IS NULL))
       ORDER BY r.number, s.seq`,
      [sessionId],
    );
    return rows.map(usageOf);
  } catch (error) {
    if (!isDamage(error)) throw error;
    // What could be read: a damaged row's usage is unknown, and counted as none.
    const salvaged = await salvageSteps(
      ctx,
      await runIdsOf(ctx, sessionId),
      'SELECT s.key, s.usage, s.status, s.ended_at, s.error_code FROM steps s',
      (row) =>
        row.status === 'completed' || (row.status === 'superseded' && row.ended_at !== null && row.error_code === null)
          ? usageOf(row as { key: string; usage: string | null })
          : null,
    );
    if (!salvaged) throw error;
    return salvaged.filter((entry): entry is StepUsageRecord => !('runId' in entry));
  }
}

export async function getStep(ctx: SqlContext, runId: string, key: string): Promise<StepDetail> {
  const rows = await ctx.driver.query(
    `${JOURNAL_SELECT.replace(' FROM steps s', `, ${blobData('prompt')} AS prompt_data FROM steps s`)} WHERE s.run_id = ? AND s.key = ? AND s.status <> 'superseded'`,
    [runId, key],
  );
  if (!rows[0]) throw stepNotFound(runId, key);
  return withPrompt(rows[0]);
}
