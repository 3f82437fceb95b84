import type { Migration } from './migration.ts';

/**
 * On PostgreSQL, recording a step whose value is known at once (a clock reading, a random number, an
 * input already delivered) is one statement too: the begin and complete functions of migration 6
 * called in turn by one function, so it is written whole or not at all. It was a transaction of
 * about ten statements (3 ms a step against 1 ms for a begin and a complete). Nothing on SQLite.
 */
export const recordStepFunction: Migration = {
  version: 9,
  name: 'record-step-function',
  script: '',
  dialects: {
    postgres: `
CREATE OR REPLACE FUNCTION quarry_record_step(
  p_session text, p_epoch bigint, p_run text, p_key text, p_phase text, p_kind text,
  p_input text, p_input_hash text, p_input_data bytea,
  p_output text, p_output_hash text, p_output_data bytea, p_usage text, p_types text[], p_data text[]
) RETURNS TABLE (seq integer, phase text, kind text, attempts integer, input text, input_data bytea,
  started_at bigint, ended_at bigint) LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM quarry_begin_step(p_session, p_epoch, p_run, p_key, p_phase, p_kind, p_input, p_input_hash,
    p_input_data, NULL, NULL, ARRAY[]::text[], ARRAY[]::text[]);
  RETURN QUERY SELECT * FROM quarry_complete_step(p_session, p_epoch, p_run, p_key, p_output, p_output_hash,
    p_output_data, p_usage, p_types, p_data);
END
$fn$;
`,
  },
};
