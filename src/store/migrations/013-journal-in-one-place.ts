import type { Migration } from './migration.ts';

/**
 * The journal's writes are defined once, in TypeScript (`sql/journal.ts`), for both databases: the
 * PostgreSQL functions of migrations 6 and 9 (one round trip per step instead of a transaction)
 * are dropped. Measured with `bench/workers.ts` (24 research sessions on a fake model answering in
 * 200 ms): 4 workers finished 242 sessions a minute with the functions and 221 without, 2 workers
 * 188 and 184; with a real model's seconds per call the difference is under 1%, not worth a second
 * definition of every write.
 */
export const journalInOnePlace: Migration = {
  version: 13,
  name: 'journal-in-one-place',
  script: '',
  dialects: {
    postgres: `
DROP FUNCTION IF EXISTS quarry_record_step;
DROP FUNCTION IF EXISTS quarry_complete_step;
DROP FUNCTION IF EXISTS quarry_begin_step;
DROP FUNCTION IF EXISTS quarry_step_refusal;
DROP FUNCTION IF EXISTS quarry_session_after_step;
DROP FUNCTION IF EXISTS quarry_put_blob;
DROP FUNCTION IF EXISTS quarry_fence;
DROP FUNCTION IF EXISTS quarry_now_ms;
`,
  },
};
