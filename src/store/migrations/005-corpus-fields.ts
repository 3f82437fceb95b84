import type { Migration } from './migration.ts';

/**
 * The document index gets fields: passages know their section headings and how much of them is link
 * text, documents whether they are navigation pages; the full-text index weighs title, headings and
 * text apart (BM25F-style). The index is a cache of the folders, so it is rebuilt rather than
 * converted: the next `quarry index` (or research over a folder) indexes every file again.
 */
export const corpusFields: Migration = {
  version: 5,
  name: 'corpus-fields',
  script: `
DROP TABLE corpus_passages;
DROP TABLE corpus_documents;

CREATE TABLE corpus_documents (
  id {{serial}},
  path TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  kind TEXT NOT NULL,
  size {{bigint}} NOT NULL,
  mtime_ms {{bigint}} NOT NULL,
  content_hash TEXT NOT NULL,
  chars {{bigint}} NOT NULL,
  navigation INTEGER NOT NULL DEFAULT 0,
  indexed_at {{bigint}} NOT NULL
);

CREATE TABLE corpus_passages (
  id {{serial}},
  document_id {{bigint}} NOT NULL REFERENCES corpus_documents (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  start_offset INTEGER NOT NULL,
  end_offset INTEGER NOT NULL,
  headings TEXT NOT NULL,
  link_density REAL NOT NULL,
  text TEXT NOT NULL
);
CREATE INDEX corpus_passages_by_document ON corpus_passages (document_id, position);
`,
  dialects: {
    // Contentless FTS5 (rowid = passage id) with three columns, ranked by bm25() with a weight per column.
    sqlite: `
DROP TABLE corpus_fts;
CREATE VIRTUAL TABLE corpus_fts USING fts5 (text, title, headings, content = '', contentless_delete = 1, tokenize = 'porter unicode61');
`,
    // The weighted tsvector is written by the passage's INSERT itself (no second statement per row).
    postgres: `
ALTER TABLE corpus_passages ADD COLUMN tsv tsvector NOT NULL;
CREATE INDEX corpus_passages_tsv ON corpus_passages USING GIN (tsv);
`,
  },
};
