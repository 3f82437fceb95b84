import type { Migration } from './migration.ts';

/** The local document corpus: files, their passages, and a full-text index over the passages. */
export const localCorpus: Migration = {
  version: 3,
  name: 'local-corpus',
  script: `
CREATE TABLE corpus_documents (
  id {{serial}},
  path TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  kind TEXT NOT NULL,
  size {{bigint}} NOT NULL,
  mtime_ms {{bigint}} NOT NULL,
  content_hash TEXT NOT NULL,
  chars {{bigint}} NOT NULL,
  indexed_at {{bigint}} NOT NULL
);

CREATE TABLE corpus_passages (
  id {{serial}},
  document_id {{bigint}} NOT NULL REFERENCES corpus_documents (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  start_offset INTEGER NOT NULL,
  end_offset INTEGER NOT NULL,
  text TEXT NOT NULL
);
CREATE INDEX corpus_passages_by_document ON corpus_passages (document_id, position);
`,
  dialects: {
    // A contentless FTS5 table (rowid = passage id), written and deleted with its passages; ranked by bm25().
    sqlite: `
CREATE VIRTUAL TABLE corpus_fts USING fts5 (text, title, content = '', contentless_delete = 1, tokenize = 'porter unicode61');
`,
    // A stored tsvector with a GIN index; ranked by ts_rank_cd.
    postgres: `
ALTER TABLE corpus_passages ADD COLUMN tsv tsvector;
CREATE INDEX corpus_passages_tsv ON corpus_passages USING GIN (tsv);
`,
  },
};
