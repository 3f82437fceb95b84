import { QuarryError } from '../../shared/errors.ts';
import type { ForkSessionInput, Session } from '../store.ts';
import { admit } from './admission.ts';
import { newId } from './codec.ts';
import { readSession, type SqlContext } from './context.ts';
import { appendEventsInTx } from './events.ts';
import type { SqlExecutor } from './sql-driver.ts';

type Row = Record<string, unknown>;

const STEP_COLUMNS =
  'key, seq, phase, kind, status, attempts, input, input_blob, output, output_blob, prompt_blob, error_code, error_message, usage, started_at, ended_at';

/** Where the copy stops: runs before the cut are copied whole, the cut run up to a step. */
interface Cut {
  runNumber: number;
  seq: number;
  startedAt: number;
}

/** The step to cut before, in run `inRun` when given (an earlier turn), else in the current run. */
async function findCut(
  tx: SqlExecutor,
  source: Session,
  beforeStep: string | undefined,
  inRun: number | undefined,
): Promise<Cut | null> {
  if (beforeStep === undefined) return null;
  const rows = await tx.query<{ seq: number; started_at: number; number: number }>(
    inRun === undefined
      ? `SELECT s.seq, s.started_at, r.number FROM steps s JOIN runs r ON r.id = s.run_id
         WHERE s.run_id = ? AND s.key = ? AND s.status <> 'superseded'`
      : `SELECT s.seq, s.started_at, r.number FROM steps s JOIN runs r ON r.id = s.run_id
         WHERE r.session_id = ? AND r.number = ? AND s.key = ? AND s.status <> 'superseded'`,
    inRun === undefined ? [source.currentRunId, beforeStep] : [source.id, inRun, beforeStep],
  );
  const row = rows[0];
  if (!row) {
    const where = inRun === undefined ? 'its current run' : `run ${inRun}`;
    throw new QuarryError('STEP_NOT_FOUND', `Session "${source.id}" has no step "${beforeStep}" in ${where}.`, {
      details: { sessionId: source.id, key: beforeStep, ...(inRun === undefined ? {} : { run: inRun }) },
    });
  }
  return { runNumber: Number(row.number), seq: Number(row.seq), startedAt: Number(row.started_at) };
}

/** Copies runs, journal, messages, sources and blob references; blobs themselves are shared. */
export async function forkSession(ctx: SqlContext, input: ForkSessionInput): Promise<Session> {
  return ctx.driver.transaction(async (tx) => {
    const source = await readSession(ctx, tx, input.sessionId, input);
    await admit(ctx, tx, { ownerId: source.ownerId, admission: input.admission });
    const cut = await findCut(tx, source, input.beforeStep, input.throughRun);
    const forkId = input.newSessionId ?? newId();
    const workflow = input.workflow ?? source.workflow;
    await tx.query(
      `INSERT INTO sessions (id, owner_id, title, question, status, settings, workflow_name, workflow_version, forked_from,
         created_at, updated_at)
       SELECT ?, owner_id, ?, question, 'interrupted', settings, ?, ?, id, ${ctx.now}, ${ctx.now} FROM sessions WHERE id = ?`,
      [forkId, input.title ?? `${source.title} (fork)`, workflow.name, workflow.version, source.id],
    );
    await tx.query('INSERT INTO blob_refs (session_id, hash) SELECT ?, hash FROM blob_refs WHERE session_id = ?', [
      forkId,
      source.id,
    ]);

    const runs = await tx.query<Row>('SELECT * FROM runs WHERE session_id = ? ORDER BY number', [source.id]);
    let currentRunId: string | null = null;
    if (input.throughRun !== undefined && !runs.some((run) => Number(run.number) === input.throughRun))
      throw new QuarryError('RUN_NOT_FOUND', `Session "${source.id}" has no run ${input.throughRun}.`, {
        details: { sessionId: source.id, run: input.throughRun },
      });
    let lastStatus: unknown = null;
    for (const run of runs) {
      const number = Number(run.number);
      if (cut && number > cut.runNumber) break;
      if (input.throughRun !== undefined && number > input.throughRun) break;
      lastStatus = run.status;
      const partial = cut !== null && number === cut.runNumber;
      const runId = newId();
      currentRunId = runId;
      await tx.query(
        `INSERT INTO runs (id, session_id, number, kind, input, status, output, next_seq, created_at, ended_at)
         SELECT ?, ?, number, kind, input, ${partial ? "'open'" : 'status'}, ${partial ? 'NULL' : 'output'}, next_seq, created_at,
           ${partial ? 'NULL' : 'ended_at'} FROM runs WHERE id = ?`,
        [runId, forkId, run.id],
      );
      await tx.query(
        `INSERT INTO steps (run_id, session_id, ${STEP_COLUMNS}) SELECT ?, ?, ${STEP_COLUMNS} FROM steps
         WHERE run_id = ? AND status <> 'superseded'${partial ? ' AND seq < ?' : ''} ORDER BY seq`,
        partial ? [runId, forkId, run.id, cut.seq] : [runId, forkId, run.id],
      );
      await tx.query(
        `INSERT INTO messages (id, session_id, seq, role, content, run_id, phase, created_at)
         SELECT ${ctx.driver.dialect.randomId}, ?, seq, role, content, ?, phase, created_at
         FROM messages WHERE session_id = ? AND run_id = ?${partial ? ' AND created_at <= ?' : ''}`,
        partial ? [forkId, runId, source.id, run.id, cut.startedAt] : [forkId, runId, source.id, run.id],
      );
      await tx.query(
        `INSERT INTO sources (id, session_id, url, title, content_hash, citation, times_considered, times_selected, metadata, run_id, created_at)
         SELECT ${ctx.driver.dialect.randomId}, ?, url, title, content_hash,
           citation, times_considered, times_selected, metadata, ?, created_at
         FROM sources WHERE session_id = ? AND run_id = ?${partial ? ' AND created_at < ?' : ''}`,
        partial ? [forkId, runId, source.id, run.id, cut.startedAt] : [forkId, runId, source.id, run.id],
      );
    }
    await refreshForkCounters(tx, forkId, currentRunId);
    // A branch after a completed turn is a finished session, ready for the next question.
    if (input.throughRun !== undefined && cut === null && lastStatus === 'completed')
      await tx.query("UPDATE sessions SET status = 'completed' WHERE id = ?", [forkId]);
    await appendEventsInTx(ctx, tx, forkId, [
      { type: 'session-fork', data: { from: source.id, beforeStep: input.beforeStep ?? null } },
    ]);
    return readSession(ctx, tx, forkId);
  });
}

async function refreshForkCounters(tx: SqlExecutor, forkId: string, runId: string | null): Promise<void> {
  const runCount = await tx.query<{ n: number }>('SELECT COUNT(*) AS n FROM runs WHERE session_id = ?', [forkId]);
  // Messages keep their seq; the counter continues after the highest one.
  const maxSeq = await tx.query<{ n: number | null }>('SELECT MAX(seq) AS n FROM messages WHERE session_id = ?', [
    forkId,
  ]);
  const counts = await tx.query<{ known: number; completed: number }>(
    `SELECT COUNT(*) AS known, COALESCE(SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END), 0) AS completed FROM steps WHERE run_id = ?`,
    [runId],
  );
  const phase = await tx.query<{ phase: string | null }>(
    "SELECT phase FROM steps WHERE run_id = ? AND status = 'completed' ORDER BY seq DESC LIMIT 1",
    [runId],
  );
  const next = await tx.query<{ key: string }>(
    "SELECT key FROM steps WHERE run_id = ? AND status IN ('running', 'failed') ORDER BY seq LIMIT 1",
    [runId],
  );
  await tx.query(
    `UPDATE sessions SET current_run_id = ?, run_count = ?, message_count = ?, known_steps = ?, completed_steps = ?, progress_phase = ?, next_step = ?
     WHERE id = ?`,
    [
      runId,
      Number(runCount[0]?.n ?? 0),
      Number(maxSeq[0]?.n ?? 0),
      Number(counts[0]?.known ?? 0),
      Number(counts[0]?.completed ?? 0),
      phase[0]?.phase ?? null,
      next[0]?.key ?? null,
      forkId,
    ],
  );
}
