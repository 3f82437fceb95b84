import type { CorpusDocument, PassageHit, SearchPassagesInput, UpsertDocumentInput } from '../store.ts';
import { escapeLike } from './codec.ts';
import type { SqlContext } from './context.ts';
import type { SqlExecutor } from './sql-driver.ts';
import { queryTerms } from '../../shared/terms.ts';

type Row = Record<string, unknown>;

function toDocument(row: Row): CorpusDocument {
  return {
    id: Number(row.id),
    path: String(row.path),
    title: String(row.title),
    kind: String(row.kind),
    size: Number(row.size),
    mtimeMs: Number(row.mtime_ms),
    contentHash: String(row.content_hash),
    chars: Number(row.chars),
    indexedAt: Number(row.indexed_at),
  };
}

async function removeDocumentInTx(ctx: SqlContext, tx: SqlExecutor, documentId: number): Promise<void> {
  await ctx.driver.fullText.unindexDocument(tx, documentId);
  await tx.query('DELETE FROM corpus_passages WHERE document_id = ?', [documentId]);
  await tx.query('DELETE FROM corpus_documents WHERE id = ?', [documentId]);
}

export async function upsertDocument(ctx: SqlContext, input: UpsertDocumentInput): Promise<CorpusDocument> {
  return ctx.driver.transaction(async (tx) => {
    const existing = await tx.query<{ id: number }>('SELECT id FROM corpus_documents WHERE path = ?', [input.path]);
    if (existing[0]) await removeDocumentInTx(ctx, tx, Number(existing[0].id));
    const [document] = await tx.query(
      `INSERT INTO corpus_documents (path, title, kind, size, mtime_ms, content_hash, chars, indexed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ${ctx.now}) RETURNING *`,
      [input.path, input.title, input.kind, input.size, input.mtimeMs, input.contentHash, input.chars],
    );
    const documentId = Number(document!.id);
    for (const [position, passage] of input.passages.entries()) {
      const [row] = await tx.query<{ id: number }>(
        'INSERT INTO corpus_passages (document_id, position, start_offset, end_offset, text) VALUES (?, ?, ?, ?, ?) RETURNING id',
        [documentId, position, passage.start, passage.end, passage.text],
      );
      await ctx.driver.fullText.indexPassage(tx, { id: Number(row!.id), title: input.title, text: passage.text });
    }
    return toDocument(document!);
  });
}

export async function touchDocument(ctx: SqlContext, input: { path: string; mtimeMs: number; size: number }): Promise<void> {
  await ctx.driver.query(`UPDATE corpus_documents SET mtime_ms = ?, size = ?, indexed_at = ${ctx.now} WHERE path = ?`, [input.mtimeMs, input.size, input.path]);
}

export async function listDocuments(ctx: SqlContext, options: { pathPrefix?: string } = {}): Promise<CorpusDocument[]> {
  const rows = options.pathPrefix
    ? await ctx.driver.query(`SELECT * FROM corpus_documents WHERE path LIKE ? ESCAPE '\\' ORDER BY path`, [`${escapeLike(options.pathPrefix)}%`])
    : await ctx.driver.query('SELECT * FROM corpus_documents ORDER BY path');
  return rows.map(toDocument);
}

export async function removeDocuments(ctx: SqlContext, paths: string[]): Promise<number> {
  if (paths.length === 0) return 0;
  return ctx.driver.transaction(async (tx) => {
    let removed = 0;
    for (const path of paths) {
      const rows = await tx.query<{ id: number }>('SELECT id FROM corpus_documents WHERE path = ?', [path]);
      if (!rows[0]) continue;
      await removeDocumentInTx(ctx, tx, Number(rows[0].id));
      removed += 1;
    }
    return removed;
  });
}

export async function searchPassages(ctx: SqlContext, input: SearchPassagesInput): Promise<PassageHit[]> {
  const terms = queryTerms(input.query);
  if (terms.length === 0) return [];
  const prefixes = input.pathPrefixes ?? [];
  const filter = prefixes.length ? ` AND (${prefixes.map(() => `d.path LIKE ? ESCAPE '\\'`).join(' OR ')})` : '';
  const { fullText } = ctx.driver;
  const rows = await ctx.driver.query(fullText.searchSql(filter), [
    ...fullText.searchParams(terms),
    ...prefixes.map((prefix) => `${escapeLike(prefix)}%`),
    input.limit ?? 10,
  ]);
  return rows.map((row) => ({
    passageId: Number(row.passage_id),
    documentId: Number(row.document_id),
    path: String(row.path),
    title: String(row.title),
    position: Number(row.position),
    start: Number(row.start_offset),
    end: Number(row.end_offset),
    text: String(row.text),
    score: Number(row.score),
  }));
}
