import type { Migration } from './migration.ts';

/** Sessions, their conversation, runs, the step journal, content-addressed blobs and events. */
export const sessionsAndJournal: Migration = {
  version: 1,
  name: 'sessions-and-journal',
  script: `
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  title TEXT NOT NULL,
  question TEXT NOT NULL,
  status TEXT NOT NULL,
  settings TEXT NOT NULL,
  workflow_name TEXT NOT NULL,
  workflow_version INTEGER NOT NULL,
  current_run_id TEXT,
  progress_phase TEXT,
  completed_steps INTEGER NOT NULL DEFAULT 0,
  known_steps INTEGER NOT NULL DEFAULT 0,
  next_step TEXT,
  lease_owner TEXT,
  lease_epoch INTEGER NOT NULL DEFAULT 0,
  lease_expires_at {{bigint}},
  claim_count INTEGER NOT NULL DEFAULT 0,
  stop_requested INTEGER NOT NULL DEFAULT 0,
  error_code TEXT,
  error_message TEXT,
  last_event_offset INTEGER NOT NULL DEFAULT 0,
  message_count INTEGER NOT NULL DEFAULT 0,
  run_count INTEGER NOT NULL DEFAULT 0,
  created_at {{bigint}} NOT NULL,
  updated_at {{bigint}} NOT NULL
);
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC);
CREATE INDEX sessions_by_owner_update ON sessions (owner_id, updated_at DESC, id DESC);
CREATE INDEX sessions_runnable ON sessions (status, updated_at) WHERE status IN ('queued', 'running');

CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  number INTEGER NOT NULL,
  kind TEXT NOT NULL,
  input TEXT,
  status TEXT NOT NULL,
  output TEXT,
  next_seq INTEGER NOT NULL DEFAULT 0,
  created_at {{bigint}} NOT NULL,
  ended_at {{bigint}},
  UNIQUE (session_id, number)
);

CREATE TABLE messages (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
  content TEXT NOT NULL,
  run_id TEXT,
  phase TEXT,
  created_at {{bigint}} NOT NULL,
  UNIQUE (session_id, seq)
);

CREATE TABLE blobs (
  hash TEXT PRIMARY KEY,
  size {{bigint}} NOT NULL,
  data {{bytes}} NOT NULL,
  created_at {{bigint}} NOT NULL
);

CREATE TABLE blob_refs (
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  hash TEXT NOT NULL REFERENCES blobs (hash),
  PRIMARY KEY (session_id, hash)
);
CREATE INDEX blob_refs_by_hash ON blob_refs (hash);

CREATE TABLE steps (
  id {{serial}},
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  seq INTEGER NOT NULL,
  phase TEXT,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  input TEXT,
  input_blob TEXT,
  output TEXT,
  output_blob TEXT,
  prompt_blob TEXT,
  error_code TEXT,
  error_message TEXT,
  usage TEXT,
  started_at {{bigint}} NOT NULL,
  ended_at {{bigint}}
);
CREATE UNIQUE INDEX steps_live_key ON steps (run_id, key) WHERE status <> 'superseded';
CREATE INDEX steps_by_run ON steps (run_id, seq);
CREATE INDEX steps_incomplete ON steps (run_id, seq) WHERE status IN ('running', 'failed');
CREATE INDEX steps_by_session ON steps (session_id);

CREATE TABLE events (
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  event_offset INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT,
  created_at {{bigint}} NOT NULL,
  PRIMARY KEY (session_id, event_offset)
);
`,
};
