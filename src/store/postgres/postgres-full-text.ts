import { FREQUENCY_CAP } from '../sql/corpus.ts';
import type { FullTextDialect } from '../sql/sql-driver.ts';

/** Rows per multi-row INSERT (10 bound values each; PostgreSQL allows 65,535). */
const PASSAGE_BATCH = 500;

/**
 * A tsvector per passage, written by the passage's own INSERT: title weighted A, headings B, text D,
 * with a GIN index; ranked by ts_rank (length-normalized).
 */
export const fullText: FullTextDialect = {
  async insertPassages(tx, document, passages) {
    for (let from = 0; from < passages.length; from += PASSAGE_BATCH) {
      const batch = passages.slice(from, from + PASSAGE_BATCH);
      await tx.query(
        `INSERT INTO corpus_passages (document_id, position, start_offset, end_offset, headings, link_density, text, tsv)
         VALUES ${batch
           .map(
             () =>
               "(?, ?, ?, ?, ?, ?, ?, setweight(to_tsvector('english', ?), 'A') || setweight(to_tsvector('english', ?), 'B') || setweight(to_tsvector('english', ?), 'D'))",
           )
           .join(', ')}`,
        batch.flatMap((passage) => [
          document.id,
          passage.position,
          passage.start,
          passage.end,
          passage.headings,
          passage.linkDensity,
          passage.text,
          document.title,
          passage.headingField,
          passage.searchText,
        ]),
      );
    }
  },
  async unindexDocument() {
    // The tsvector lives on the passage rows and goes with them.
  },
  searchSql: (filter) => `SELECT p.id AS passage_id, p.document_id, p.position, p.start_offset, p.end_offset, p.text,
      p.headings, p.link_density, d.path, d.title, d.navigation, ts_rank(p.tsv, q, 1) AS score
    FROM corpus_passages p JOIN corpus_documents d ON d.id = p.document_id, to_tsquery('english', ?) q
    WHERE p.tsv @@ q${filter} ORDER BY score DESC, p.id LIMIT ?`,
  // Terms are letters and digits only (the caller's tokenizer), quoted as tsquery lexemes.
  searchParams: (terms) => [terms.map((term) => `'${term}'`).join(' | ')],
  countSql: (terms) =>
    Array.from(
      { length: terms },
      (_, index) =>
        `SELECT ${index} AS i, COUNT(*) AS n FROM (SELECT 1 FROM corpus_passages WHERE tsv @@ to_tsquery('english', ?) LIMIT ${FREQUENCY_CAP}) found`,
    ).join(' UNION ALL '),
  // Without statistics the planner misjudges the GIN index and searches slow down as the corpus grows.
  refreshStatisticsSql: 'ANALYZE corpus_passages, corpus_documents',
};
