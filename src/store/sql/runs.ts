import { QuarryError } from '../../shared/errors.ts';
import type { AppendMessageInput, Message, MessageRole, OwnerScope, Run, RunStatus, StartRunInput } from '../store.ts';
import { admit } from './admission.ts';
import { decodeJson, encodeJson, newId } from './codec.ts';
import { checkFence, notifyRunnable, readSession, type SqlContext, touchSession } from './context.ts';
import type { SqlExecutor } from './sql-driver.ts';

type Row = Record<string, unknown>;

function toMessage(row: Row): Message {
  return {
    id: String(row.id),
    sessionId: String(row.session_id),
    seq: Number(row.seq),
    role: row.role as MessageRole,
    content: String(row.content),
    runId: (row.run_id as string | null) ?? null,
    phase: (row.phase as string | null) ?? null,
    createdAt: Number(row.created_at),
  };
}

export function toRun(row: Row): Run {
  return {
    id: String(row.id),
    sessionId: String(row.session_id),
    number: Number(row.number),
    kind: String(row.kind),
    input: decodeJson(row.input),
    status: row.status as RunStatus,
    output: decodeJson(row.output),
    createdAt: Number(row.created_at),
    endedAt: row.ended_at === null ? null : Number(row.ended_at),
    traceContext: (row.trace_context as string | null | undefined) ?? null,
  };
}

export async function appendMessageInTx(
  ctx: SqlContext,
  tx: SqlExecutor,
  input: { sessionId: string; role: MessageRole; content: string; runId?: string | null; phase?: string | null },
): Promise<Message> {
  const rows = await tx.query<{ message_count: number; now: number }>(
    `UPDATE sessions SET message_count = message_count + 1 WHERE id = ? RETURNING message_count, ${ctx.now} AS now`,
    [input.sessionId],
  );
  const message: Message = {
    id: newId(),
    sessionId: input.sessionId,
    seq: Number(rows[0]!.message_count),
    role: input.role,
    content: input.content,
    runId: input.runId ?? null,
    phase: input.phase ?? null,
    createdAt: Number(rows[0]!.now),
  };
  await tx.query(
    'INSERT INTO messages (id, session_id, seq, role, content, run_id, phase, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    [
      message.id,
      message.sessionId,
      message.seq,
      message.role,
      message.content,
      message.runId,
      message.phase,
      message.createdAt,
    ],
  );
  return message;
}

export async function appendMessage(ctx: SqlContext, input: AppendMessageInput): Promise<Message> {
  return ctx.driver.transaction(async (tx) => {
    if (input.fence) await checkFence(ctx, tx, input.fence);
    else await touchSession(ctx, tx, input.sessionId);
    return appendMessageInTx(ctx, tx, input);
  });
}

export async function listMessages(
  ctx: SqlContext,
  sessionId: string,
  options: { runId?: string; phase?: string } & OwnerScope = {},
): Promise<Message[]> {
  await readSession(ctx, ctx.driver, sessionId, options);
  let sql = 'SELECT * FROM messages WHERE session_id = ?';
  const params: unknown[] = [sessionId];
  if (options.runId !== undefined) {
    sql += ' AND run_id = ?';
    params.push(options.runId);
  }
  if (options.phase !== undefined) {
    sql += ' AND phase = ?';
    params.push(options.phase);
  }
  const rows = await ctx.driver.query(`${sql} ORDER BY seq`, params);
  return rows.map(toMessage);
}

/** Inserts the run, appends its message, and makes it the session's current, queued run. */
export async function startRunInTx(
  ctx: SqlContext,
  tx: SqlExecutor,
  input: {
    sessionId: string;
    kind: string;
    input?: unknown;
    message?: { role: MessageRole; content: string };
    /** `interrupted`: the run waits to be resumed instead of being queued. */
    status?: 'queued' | 'interrupted';
    traceContext?: string | null;
  },
): Promise<{ run: Run; message: Message | null }> {
  const counted = await tx.query<{ run_count: number; now: number }>(
    `UPDATE sessions SET run_count = run_count + 1 WHERE id = ? RETURNING run_count, ${ctx.now} AS now`,
    [input.sessionId],
  );
  const run: Run = {
    id: newId(),
    sessionId: input.sessionId,
    number: Number(counted[0]!.run_count),
    kind: input.kind,
    input: input.input,
    status: 'open',
    output: undefined,
    createdAt: Number(counted[0]!.now),
    endedAt: null,
    traceContext: input.traceContext ?? null,
  };
  await tx.query(
    'INSERT INTO runs (id, session_id, number, kind, input, status, created_at, trace_context) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    [run.id, run.sessionId, run.number, run.kind, encodeJson(run.input), run.status, run.createdAt, run.traceContext],
  );
  const message = input.message
    ? await appendMessageInTx(ctx, tx, { sessionId: input.sessionId, ...input.message, runId: run.id })
    : null;
  await tx.query(
    `UPDATE sessions SET current_run_id = ?, status = ?, lease_owner = NULL, lease_expires_at = NULL, claim_count = 0,
       stop_requested = 0, completed_steps = 0, known_steps = 0, progress_phase = NULL, next_step = NULL,
       error_code = NULL, error_message = NULL, updated_at = ${ctx.now} WHERE id = ?`,
    [run.id, input.status ?? 'queued', input.sessionId],
  );
  if ((input.status ?? 'queued') === 'queued') notifyRunnable(tx);
  return { run, message };
}

export async function startRun(ctx: SqlContext, input: StartRunInput): Promise<{ run: Run; message: Message | null }> {
  return ctx.driver.transaction(async (tx) => {
    await touchSession(ctx, tx, input.sessionId, input);
    const session = await readSession(ctx, tx, input.sessionId);
    await admit(ctx, tx, { ownerId: session.ownerId, admission: input.admission, sessionId: session.id });
    if (session.status === 'running') {
      throw new QuarryError(
        'SESSION_ALREADY_RUNNING',
        `Session "${input.sessionId}" is running; wait for it or stop it first.`,
        {
          details: { sessionId: input.sessionId },
        },
      );
    }
    if (input.settings !== undefined)
      await tx.query('UPDATE sessions SET settings = ? WHERE id = ?', [encodeJson(input.settings), input.sessionId]);
    return startRunInTx(ctx, tx, input);
  });
}

export async function getRun(ctx: SqlContext, runId: string): Promise<Run> {
  const rows = await ctx.driver.query('SELECT * FROM runs WHERE id = ?', [runId]);
  if (!rows[0]) throw new QuarryError('RUN_NOT_FOUND', `No run with id "${runId}".`, { details: { runId } });
  return toRun(rows[0]);
}

export async function listRuns(ctx: SqlContext, sessionId: string, scope: OwnerScope = {}): Promise<Run[]> {
  await readSession(ctx, ctx.driver, sessionId, scope);
  const rows = await ctx.driver.query('SELECT * FROM runs WHERE session_id = ? ORDER BY number', [sessionId]);
  return rows.map(toRun);
}
