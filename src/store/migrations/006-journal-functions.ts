import type { Migration } from './migration.ts';

/**
 * On PostgreSQL, beginning and completing a step are one statement each (one round trip instead of
 * about ten): functions that write the step, its blobs and its events, and update the session row
 * once, fence included (a stale epoch raises, and the statement is undone as a whole). They raise their own SQLSTATEs (class QL), which the store turns into its
 * errors: QL001 lease lost, QL002 no such session, QL003 step already completed, QL004 no such run,
 * QL005 no such step. SQLite keeps its transactions: they run in-process, with no round trips.
 *
 * (No `?` anywhere below: migration scripts pass through the placeholder rewriter.)
 */
export const journalFunctions: Migration = {
  version: 6,
  name: 'journal-functions',
  script: '',
  dialects: {
    postgres: `
-- Room on each page for updated rows: the session row changes with every step.
ALTER TABLE sessions SET (fillfactor = 70);

CREATE OR REPLACE FUNCTION quarry_now_ms() RETURNS bigint LANGUAGE sql VOLATILE AS $fn$
  SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint
$fn$;

CREATE OR REPLACE FUNCTION quarry_fence(p_session text, p_epoch bigint) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE sessions SET updated_at = quarry_now_ms()
    WHERE id = p_session AND lease_epoch = p_epoch AND lease_owner IS NOT NULL;
  IF NOT FOUND THEN
    IF EXISTS (SELECT 1 FROM sessions WHERE id = p_session) THEN
      RAISE EXCEPTION 'lease lost' USING ERRCODE = 'QL001';
    END IF;
    RAISE EXCEPTION 'no such session' USING ERRCODE = 'QL002';
  END IF;
END
$fn$;

CREATE OR REPLACE FUNCTION quarry_put_blob(p_session text, p_hash text, p_data bytea) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  IF p_hash IS NULL THEN
    RETURN;
  END IF;
  INSERT INTO blobs (hash, size, data, created_at) VALUES (p_hash, octet_length(p_data), p_data, quarry_now_ms())
    ON CONFLICT (hash) DO NOTHING;
  INSERT INTO blob_refs (session_id, hash) VALUES (p_session, p_hash) ON CONFLICT (session_id, hash) DO NOTHING;
END
$fn$;

-- The session row's one UPDATE per journal write: the fence (epoch and owner), its next step,
-- counters and progress phase (when the run is the current one) and its event counter; then the
-- events and their notification. A stale epoch raises, and the whole statement is undone.
CREATE OR REPLACE FUNCTION quarry_session_after_step(
  p_session text, p_epoch bigint, p_run text, p_known integer, p_completed integer, p_phase text,
  p_recount_next boolean, p_new_key text, p_types text[], p_data text[]
) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  v_count integer := coalesce(array_length(p_types, 1), 0);
  v_last bigint;
BEGIN
  UPDATE sessions SET
    -- At most once a second: updated_at is indexed (listings), and an unchanged indexed column lets
    -- PostgreSQL update the row in place (a HOT update) instead of adding to every index.
    updated_at = CASE WHEN updated_at < quarry_now_ms() - 1000 THEN quarry_now_ms() ELSE updated_at END,
    next_step = CASE
      WHEN current_run_id IS DISTINCT FROM p_run THEN next_step
      WHEN p_recount_next THEN
        (SELECT key FROM steps WHERE run_id = p_run AND status IN ('running', 'failed') ORDER BY seq LIMIT 1)
      -- A new step is the run's last: it is the next step only when no earlier one is incomplete.
      ELSE coalesce(next_step, p_new_key) END,
    known_steps = known_steps + CASE WHEN current_run_id = p_run THEN p_known ELSE 0 END,
    completed_steps = completed_steps + CASE WHEN current_run_id = p_run THEN p_completed ELSE 0 END,
    progress_phase = CASE WHEN current_run_id = p_run AND p_completed > 0 THEN p_phase ELSE progress_phase END,
    last_event_offset = last_event_offset + v_count
  WHERE id = p_session AND lease_epoch = p_epoch AND lease_owner IS NOT NULL
  RETURNING last_event_offset INTO v_last;
  IF NOT FOUND THEN
    IF EXISTS (SELECT 1 FROM sessions WHERE id = p_session) THEN
      RAISE EXCEPTION 'lease lost' USING ERRCODE = 'QL001';
    END IF;
    RAISE EXCEPTION 'no such session' USING ERRCODE = 'QL002';
  END IF;
  IF v_count > 0 THEN
    INSERT INTO events (session_id, event_offset, type, data, created_at)
      SELECT p_session, v_last - v_count + e.n, e.type, e.data, quarry_now_ms()
      FROM unnest(p_types, p_data) WITH ORDINALITY AS e(type, data, n);
    PERFORM pg_notify(current_schema() || '_events', p_session || ':' || v_last);
  END IF;
END
$fn$;

-- Why a step write found no row to change: the fence first (as the transactions check it), then
-- the step itself.
CREATE OR REPLACE FUNCTION quarry_step_refusal(p_session text, p_epoch bigint, p_run text, p_key text)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM quarry_fence(p_session, p_epoch);
  IF EXISTS (SELECT 1 FROM steps WHERE run_id = p_run AND key = p_key AND status = 'completed') THEN
    RAISE EXCEPTION 'step already completed' USING ERRCODE = 'QL003';
  END IF;
  RAISE EXCEPTION 'no such step' USING ERRCODE = 'QL005';
END
$fn$;

CREATE OR REPLACE FUNCTION quarry_begin_step(
  p_session text, p_epoch bigint, p_run text, p_key text, p_phase text, p_kind text,
  p_input text, p_input_hash text, p_input_data bytea, p_prompt_hash text, p_prompt_data bytea,
  p_types text[], p_data text[]
) RETURNS TABLE (seq integer, attempts integer, started_at bigint, phase text, kind text) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  v_status text;
  v_seq integer;
BEGIN
  SELECT s.status INTO v_status FROM steps s WHERE s.run_id = p_run AND s.key = p_key AND s.status <> 'superseded';
  IF v_status = 'completed' THEN
    PERFORM quarry_step_refusal(p_session, p_epoch, p_run, p_key);
  END IF;
  PERFORM quarry_put_blob(p_session, p_input_hash, p_input_data);
  PERFORM quarry_put_blob(p_session, p_prompt_hash, p_prompt_data);
  IF v_status IS NOT NULL THEN
    RETURN QUERY UPDATE steps s SET status = 'running', attempts = s.attempts + 1, input = p_input,
        input_blob = p_input_hash, prompt_blob = p_prompt_hash, error_code = NULL, error_message = NULL,
        started_at = quarry_now_ms(), ended_at = NULL
      WHERE s.run_id = p_run AND s.key = p_key AND s.status <> 'superseded'
      RETURNING s.seq, s.attempts, s.started_at, s.phase, s.kind;
    PERFORM quarry_session_after_step(p_session, p_epoch, p_run, 0, 0, NULL, true, NULL, p_types, p_data);
  ELSE
    UPDATE runs r SET next_seq = r.next_seq + 1 WHERE r.id = p_run AND r.session_id = p_session
      RETURNING r.next_seq INTO v_seq;
    IF v_seq IS NULL THEN
      PERFORM quarry_fence(p_session, p_epoch);
      RAISE EXCEPTION 'no such run' USING ERRCODE = 'QL004';
    END IF;
    RETURN QUERY INSERT INTO steps AS s (run_id, session_id, key, seq, phase, kind, status, attempts, input,
        input_blob, prompt_blob, started_at)
      VALUES (p_run, p_session, p_key, v_seq, p_phase, p_kind, 'running', 1, p_input, p_input_hash, p_prompt_hash,
        quarry_now_ms())
      RETURNING s.seq, s.attempts, s.started_at, s.phase, s.kind;
    PERFORM quarry_session_after_step(p_session, p_epoch, p_run, 1, 0, NULL, false, p_key, p_types, p_data);
  END IF;
END
$fn$;

CREATE OR REPLACE FUNCTION quarry_complete_step(
  p_session text, p_epoch bigint, p_run text, p_key text,
  p_output text, p_output_hash text, p_output_data bytea, p_usage text, p_types text[], p_data text[]
) RETURNS TABLE (seq integer, phase text, kind text, attempts integer, input text, input_data bytea,
  started_at bigint, ended_at bigint) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  v_phase text;
  v_found boolean := false;
BEGIN
  PERFORM quarry_put_blob(p_session, p_output_hash, p_output_data);
  FOR seq, phase, kind, attempts, input, input_data, started_at, ended_at IN
    UPDATE steps s SET status = 'completed', output = p_output, output_blob = p_output_hash,
        usage = p_usage, ended_at = quarry_now_ms()
      WHERE s.run_id = p_run AND s.key = p_key AND s.status NOT IN ('superseded', 'completed')
      RETURNING s.seq, s.phase, s.kind, s.attempts, s.input,
        (SELECT b.data FROM blobs b WHERE b.hash = s.input_blob), s.started_at, s.ended_at
  LOOP
    v_found := true;
    v_phase := phase;
    RETURN NEXT;
  END LOOP;
  IF NOT v_found THEN
    PERFORM quarry_step_refusal(p_session, p_epoch, p_run, p_key);
  END IF;
  PERFORM quarry_session_after_step(p_session, p_epoch, p_run, 0, 1, v_phase, true, NULL, p_types, p_data);
END
$fn$;
`,
  },
};
