import type { DeleteFinishedOptions } from '../store.ts';
import type { SqlContext } from './context.ts';
import { deleteSessionInTx } from './sessions.ts';

/** Deletes finished sessions in bounded transactions so a large sweep never holds locks for long. */
export async function deleteFinishedSessions(ctx: SqlContext, options: DeleteFinishedOptions): Promise<{ deleted: number }> {
  const batchSize = options.batchSize ?? 100;
  let deleted = 0;
  for (;;) {
    if (options.signal?.aborted) break;
    const count = await ctx.driver.transaction(async (tx) => {
      const rows = await tx.query<{ id: string }>(
        `SELECT id FROM sessions WHERE status IN ('completed', 'failed', 'interrupted') AND updated_at < ${ctx.now} - ?
         ORDER BY updated_at LIMIT ?${ctx.driver.dialect.claimLock}`,
        [options.olderThanMs, batchSize],
      );
      for (const row of rows) await deleteSessionInTx(tx, row.id);
      return rows.length;
    });
    deleted += count;
    if (count < batchSize) break;
  }
  return { deleted };
}
