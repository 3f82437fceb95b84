import type { Migration } from './migration.ts';

/**
 * PostgreSQL keeps a passage's text and tsvector in its row instead of moving them to the TOAST
 * table. A long passage's row passes the 2 KB at which PostgreSQL moves its largest value out, and
 * ranking a search's matches then fetched each such tsvector from there, one index lookup per match.
 * Rows now stay whole up to a page (8 KB), compressed in place beyond it. On the generated 50 MB
 * benchmark corpus, where nearly every row passed 2 KB, the query for candidates takes 10–11 ms
 * instead of 12–14 ms and the table 194 MB instead of 164 MB with its TOAST; of the PostgreSQL
 * manual's rows 4% passed it. Applies to rows written from now on. Nothing changes on SQLite.
 */
export const passagesInline: Migration = {
  version: 8,
  name: 'passages-inline',
  script: '',
  dialects: {
    postgres: `
ALTER TABLE corpus_passages SET (toast_tuple_target = 8160);
ALTER TABLE corpus_passages ALTER COLUMN tsv SET STORAGE MAIN, ALTER COLUMN text SET STORAGE MAIN;
`,
  },
};
