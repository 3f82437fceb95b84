import type { Migration } from './migration.ts';

/**
 * A read-only share link per session: the hash of its token (the token itself is shown once, to
 * its owner). Making a new link replaces the old one; deleting the session deletes its link.
 */
export const shareLinks: Migration = {
  version: 14,
  name: 'share-links',
  script: `
CREATE TABLE share_links (
  session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  created_at {{bigint}} NOT NULL
);
`,
};
