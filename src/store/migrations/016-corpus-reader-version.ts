import type { Migration } from './migration.ts';

/**
 * A document records the version of the reader (extraction and chunking) that made its passages, so
 * a change to how documents are read reaches every document on the next index, unchanged files too.
 * Documents indexed before this version read as version 0.
 */
export const corpusReaderVersion: Migration = {
  version: 16,
  name: 'corpus-reader-version',
  script: `
ALTER TABLE corpus_documents ADD COLUMN reader_version INTEGER NOT NULL DEFAULT 0;
`,
};
