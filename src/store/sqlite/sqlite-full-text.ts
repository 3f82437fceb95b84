import { FREQUENCY_CAP } from '../sql/corpus.ts';
import type { FullTextDialect } from '../sql/sql-driver.ts';

/** Rows per multi-row INSERT (SQLite allows 32,766 bound values). */
const PASSAGE_BATCH = 500;

/**
 * FTS5 over a contentless table whose rowid is the passage id, with text, title and headings as
 * columns; bm25() weighs a title match 4 times and a heading match 2.5 times a body match.
 */
export const fullText: FullTextDialect = {
  async insertPassages(tx, document, passages) {
    for (let from = 0; from < passages.length; from += PASSAGE_BATCH) {
      const batch = passages.slice(from, from + PASSAGE_BATCH);
      const rows = await tx.query<{ id: number }>(
        `INSERT INTO corpus_passages (document_id, position, start_offset, end_offset, headings, link_density, text)
         VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')} RETURNING id`,
        batch.flatMap((passage) => [
          document.id,
          passage.position,
          passage.start,
          passage.end,
          passage.headings,
          passage.linkDensity,
          passage.text,
        ]),
      );
      // RETURNING follows the VALUES order for a plain multi-row INSERT.
      await tx.query(
        `INSERT INTO corpus_fts (rowid, text, title, headings) VALUES ${batch.map(() => '(?, ?, ?, ?)').join(', ')}`,
        batch.flatMap((passage, index) => [
          Number(rows[index]!.id),
          passage.searchText,
          document.title,
          passage.headingField,
        ]),
      );
    }
  },
  async unindexDocument(tx, documentId) {
    await tx.query('DELETE FROM corpus_fts WHERE rowid IN (SELECT id FROM corpus_passages WHERE document_id = ?)', [
      documentId,
    ]);
  },
  searchSql: (filter) => `SELECT p.id AS passage_id, p.document_id, p.position, p.start_offset, p.end_offset, p.text,
      p.headings, p.link_density, d.path, d.title, d.navigation, -bm25(corpus_fts, 1.0, 4.0, 2.5) AS score
    FROM corpus_fts JOIN corpus_passages p ON p.id = corpus_fts.rowid JOIN corpus_documents d ON d.id = p.document_id
    WHERE corpus_fts MATCH ?${filter} ORDER BY bm25(corpus_fts, 1.0, 4.0, 2.5), p.id LIMIT ?`,
  // Each term quoted, so query text can never be read as FTS5 syntax.
  searchParams: (terms) => [terms.map((term) => `"${term}"`).join(' OR ')],
  countSql: (terms) =>
    Array.from(
      { length: terms },
      (_, index) =>
        `SELECT ${index} AS i, COUNT(*) AS n FROM (SELECT 1 FROM corpus_fts WHERE corpus_fts MATCH ? LIMIT ${FREQUENCY_CAP})`,
    ).join(' UNION ALL '),
  refreshStatisticsSql: 'PRAGMA optimize',
};
