import type { Migration } from './migration.ts';

/** What research found (sources), answers from people (inbox), and API users with hashed tokens. */
export const sourcesInboxUsers: Migration = {
  version: 2,
  name: 'sources-inbox-users',
  script: `
CREATE TABLE sources (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  title TEXT NOT NULL,
  content_hash TEXT,
  citation INTEGER,
  times_considered INTEGER NOT NULL DEFAULT 0,
  times_selected INTEGER NOT NULL DEFAULT 0,
  metadata TEXT NOT NULL,
  run_id TEXT,
  created_at {{bigint}} NOT NULL,
  UNIQUE (session_id, url)
);

CREATE TABLE inbox (
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  request_key TEXT NOT NULL,
  value TEXT,
  received_at {{bigint}} NOT NULL,
  PRIMARY KEY (run_id, request_key)
);

CREATE TABLE users (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at {{bigint}} NOT NULL
);

CREATE TABLE api_tokens (
  token_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  label TEXT,
  created_at {{bigint}} NOT NULL
);
`,
};
