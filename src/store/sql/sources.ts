import type { OwnerScope, Source, UpsertSourceInput } from '../store.ts';
import { decodeObject, encodeJson, newId } from './codec.ts';
import { checkFence, readSession, type SqlContext, touchSession } from './context.ts';

type Row = Record<string, unknown>;

function toSource(row: Row): Source {
  return {
    id: String(row.id),
    sessionId: String(row.session_id),
    url: String(row.url),
    title: String(row.title),
    contentHash: (row.content_hash as string | null) ?? null,
    citation: row.citation === null ? null : Number(row.citation),
    timesConsidered: Number(row.times_considered),
    timesSelected: Number(row.times_selected),
    metadata: decodeObject(row.metadata),
    runId: (row.run_id as string | null) ?? null,
    createdAt: Number(row.created_at),
  };
}

export async function upsertSource(ctx: SqlContext, input: UpsertSourceInput): Promise<Source> {
  return ctx.driver.transaction(async (tx) => {
    if (input.fence) await checkFence(ctx, tx, input.fence);
    else await touchSession(ctx, tx, input.sessionId);
    const found = await tx.query<{ id: string }>('SELECT id FROM sources WHERE session_id = ? AND url = ?', [
      input.sessionId,
      input.url,
    ]);
    if (found[0]) {
      await tx.query(
        `UPDATE sources SET title = COALESCE(?, title), content_hash = COALESCE(?, content_hash), citation = COALESCE(?, citation),
           metadata = COALESCE(?, metadata), times_considered = times_considered + ?, times_selected = times_selected + ? WHERE id = ?`,
        [
          input.title ?? null,
          input.contentHash ?? null,
          input.citation ?? null,
          input.metadata ? encodeJson(input.metadata) : null,
          input.considered ?? 0,
          input.selected ?? 0,
          found[0].id,
        ],
      );
    } else {
      await tx.query(
        `INSERT INTO sources (id, session_id, url, title, content_hash, citation, times_considered, times_selected, metadata, run_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${ctx.now})`,
        [
          newId(),
          input.sessionId,
          input.url,
          input.title ?? input.url,
          input.contentHash ?? null,
          input.citation ?? null,
          input.considered ?? 0,
          input.selected ?? 0,
          encodeJson(input.metadata ?? {}),
          input.runId ?? null,
        ],
      );
    }
    const rows = await tx.query('SELECT * FROM sources WHERE session_id = ? AND url = ?', [input.sessionId, input.url]);
    return toSource(rows[0]!);
  });
}

export async function listSources(ctx: SqlContext, sessionId: string, scope: OwnerScope = {}): Promise<Source[]> {
  await readSession(ctx, ctx.driver, sessionId, scope);
  const rows = await ctx.driver.query(
    'SELECT * FROM sources WHERE session_id = ? ORDER BY CASE WHEN citation IS NULL THEN 1 ELSE 0 END, citation, created_at, id',
    [sessionId],
  );
  return rows.map(toSource);
}
