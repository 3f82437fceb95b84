import type { Migration } from './migration.ts';

/**
 * Documents carry a sketch of their text (sampled shingle hashes) and what they duplicate, if
 * anything: mirrors and aggregates of other pages are never searched. A file that could not be
 * indexed is recorded with its reason, so an unchanged one is not read again on every run.
 */
export const corpusDuplicates: Migration = {
  version: 12,
  name: 'corpus-duplicates',
  script: `
ALTER TABLE corpus_documents ADD COLUMN sketch TEXT;
ALTER TABLE corpus_documents ADD COLUMN duplicate_of TEXT;
ALTER TABLE corpus_documents ADD COLUMN error TEXT;
`,
};
