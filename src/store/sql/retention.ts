import type { DeleteFinishedOptions } from '../store.ts';
import type { SqlContext } from './context.ts';
import { deleteSessionInTx } from './sessions.ts';

/** Deletes finished sessions in bounded transactions so a large sweep never holds locks for long. */
export async function deleteFinishedSessions(
  ctx: SqlContext,
  options: DeleteFinishedOptions,
): Promise<{ deleted: number }> {
  const statuses = options.statuses ?? ['completed', 'failed'];
  const batchSize = options.batchSize ?? 100;
  const params: unknown[] = [...statuses, options.olderThanMs];
  let where = `status IN (${statuses.map(() => '?').join(', ')}) AND updated_at <= ${ctx.now} - ?`;
  if (options.ownerId !== undefined) {
    where += ' AND owner_id = ?';
    params.push(options.ownerId);
  }
  if (options.dryRun) {
    const [row] = await ctx.driver.query<{ count: number }>(
      `SELECT COUNT(*) AS count FROM sessions WHERE ${where}`,
      params,
    );
    return { deleted: Number(row?.count ?? 0) };
  }
  let deleted = 0;
  for (;;) {
    if (options.signal?.aborted) break;
    const count = await ctx.driver.transaction(async (tx) => {
      const rows = await tx.query<{ id: string }>(
        `SELECT id FROM sessions WHERE ${where} ORDER BY updated_at LIMIT ?${ctx.driver.dialect.claimLock}`,
        [...params, batchSize],
      );
      for (const row of rows) await deleteSessionInTx(tx, row.id);
      return rows.length;
    });
    deleted += count;
    if (count < batchSize) break;
  }
  return { deleted };
}
