import type {
  EventInput,
  Fence,
  ListStepsOptions,
  OwnerScope,
  StepDetail,
  StepPrompt,
  StepRecord,
  StepUsage,
  StepUsageRecord,
} from '../store.ts';
import { decodeJson, stepNotFound, toStepRecord } from './codec.ts';
import { checkFence, readSession, type SqlContext } from './context.ts';
import { appendEventsInTx } from './events.ts';
import { blobData, JOURNAL_SELECT, STEP_COLUMNS } from './journal-select.ts';
import { isDamage, salvageSteps } from './salvage.ts';
import type { SqlExecutor } from './sql-driver.ts';

type Row = Record<string, unknown>;

/** Sets the session's resume point to the run's first incomplete live step (for listings). */
async function refreshNextStep(tx: SqlExecutor, sessionId: string, runId: string): Promise<void> {
  await tx.query(
    `UPDATE sessions SET next_step = (SELECT key FROM steps WHERE run_id = ? AND status IN ('running', 'failed') ORDER BY seq LIMIT 1)
     WHERE id = ? AND current_run_id = ?`,
    [runId, sessionId, runId],
  );
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
    await refreshNextStep(tx, fence.sessionId, input.runId);
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
