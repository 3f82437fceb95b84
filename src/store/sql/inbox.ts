import { QuarryError } from '../../shared/errors.ts';
import type { DeliverInputInput, DeliverInputResult } from '../store.ts';
import { decodeJson, encodeJson } from './codec.ts';
import { notifyRunnable, readSession, type SqlContext, touchSession } from './context.ts';
import { appendEventsInTx } from './events.ts';

/**
 * Records an answer once per (session, request). The insert and the `waiting → queued` change share
 * one transaction, so a duplicate delivery can neither record a second answer nor queue twice.
 */
export async function deliverInput(ctx: SqlContext, input: DeliverInputInput): Promise<DeliverInputResult> {
  return ctx.driver.transaction(async (tx) => {
    await touchSession(ctx, tx, input.sessionId, input);
    const inserted = await tx.query(
      `INSERT INTO inbox (session_id, run_id, request_key, value, received_at)
       SELECT ?, id, ?, ?, ${ctx.now} FROM runs WHERE id = ? AND session_id = ?
       ON CONFLICT (run_id, request_key) DO NOTHING RETURNING request_key`,
      [input.sessionId, input.requestKey, encodeJson(input.value), input.runId, input.sessionId],
    );
    if (inserted.length === 0) {
      const rows = await tx.query<{ value: string | null }>(
        'SELECT value FROM inbox WHERE run_id = ? AND request_key = ? AND session_id = ?',
        [input.runId, input.requestKey, input.sessionId],
      );
      if (rows.length === 0)
        throw new QuarryError('RUN_NOT_FOUND', `Session "${input.sessionId}" has no run "${input.runId}".`, {
          details: { runId: input.runId },
        });
      return { accepted: false, value: decodeJson(rows[0]?.value), queued: false };
    }
    const session = await readSession(ctx, tx, input.sessionId);
    let queued = false;
    if (session.storedStatus === 'waiting') {
      await tx.query("UPDATE sessions SET status = 'queued' WHERE id = ?", [input.sessionId]);
      notifyRunnable(tx);
      queued = true;
    }
    await appendEventsInTx(ctx, tx, input.sessionId, [{ type: 'input-receive', data: { key: input.requestKey } }]);
    return { accepted: true, value: input.value, queued };
  });
}

export async function readInput(
  ctx: SqlContext,
  runId: string,
  requestKey: string,
): Promise<{ value: unknown } | undefined> {
  const rows = await ctx.driver.query<{ value: string | null }>(
    'SELECT value FROM inbox WHERE run_id = ? AND request_key = ?',
    [runId, requestKey],
  );
  return rows[0] ? { value: decodeJson(rows[0].value) } : undefined;
}
