import type { Migration } from './migration.ts';

/**
 * Forks know their parent; sessions may carry the caller's own id (idempotent create); API tokens get
 * an id, an expiry and can be revoked one at a time; leases record the owner's host and process, so
 * a claim from the same host can take over at once from a process that is gone.
 */
export const linksTokensLeaseOwners: Migration = {
  version: 4,
  name: 'links-tokens-lease-owners',
  script: `
ALTER TABLE sessions ADD COLUMN forked_from TEXT;
ALTER TABLE sessions ADD COLUMN external_id TEXT;
ALTER TABLE sessions ADD COLUMN lease_host TEXT;
ALTER TABLE sessions ADD COLUMN lease_pid INTEGER;
CREATE UNIQUE INDEX sessions_by_external_id ON sessions (owner_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX sessions_by_parent ON sessions (forked_from) WHERE forked_from IS NOT NULL;

ALTER TABLE api_tokens ADD COLUMN id TEXT;
ALTER TABLE api_tokens ADD COLUMN expires_at {{bigint}};
UPDATE api_tokens SET id = substr(token_hash, 1, 12);
CREATE UNIQUE INDEX api_tokens_by_id ON api_tokens (id);
CREATE INDEX api_tokens_by_user ON api_tokens (user_id);
`,
};
