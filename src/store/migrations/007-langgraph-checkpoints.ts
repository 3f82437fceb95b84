import type { Migration } from './migration.ts';

/**
 * LangGraph checkpoints kept by Quarry's store (`quarry/langgraph`): a thread is a session; a
 * checkpoint is stored without its channel values, which are stored once per channel version by the
 * checkpoint that introduced it (its origin: branches of a thread may reach the same version number
 * with different values) as content-addressed blobs; later checkpoints and forks refer to them
 * (`value_refs`: channel → origin). A list channel that grew by appending is stored as its new items
 * on top of the value it grew from.
 */
export const langGraphCheckpoints: Migration = {
  version: 7,
  name: 'langgraph-checkpoints',
  script: `
CREATE TABLE lg_checkpoints (
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  checkpoint_ns TEXT NOT NULL,
  checkpoint_id TEXT NOT NULL,
  parent_id TEXT,
  body_type TEXT NOT NULL,
  body_blob TEXT NOT NULL,
  metadata TEXT NOT NULL,
  value_refs TEXT NOT NULL,
  created_at {{bigint}} NOT NULL,
  PRIMARY KEY (session_id, checkpoint_ns, checkpoint_id)
);

CREATE TABLE lg_channel_values (
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  checkpoint_ns TEXT NOT NULL,
  channel TEXT NOT NULL,
  version TEXT NOT NULL,
  origin TEXT NOT NULL,
  value_type TEXT NOT NULL,
  value_blob TEXT NOT NULL,
  base_version TEXT,
  base_origin TEXT,
  PRIMARY KEY (session_id, checkpoint_ns, channel, version, origin)
);

CREATE TABLE lg_writes (
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  checkpoint_ns TEXT NOT NULL,
  checkpoint_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  channel TEXT NOT NULL,
  value_type TEXT NOT NULL,
  value_blob TEXT NOT NULL,
  task_path TEXT NOT NULL,
  PRIMARY KEY (session_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
`,
};
