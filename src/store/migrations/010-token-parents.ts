import type { Migration } from './migration.ts';

/**
 * A token minted from another (a browser's sign-in from the API token it signed in with) records its
 * parent, so revoking the parent revokes it. Sign-ins from before this version have no parent to
 * answer to: they are removed (those browsers sign in again).
 */
export const tokenParents: Migration = {
  version: 10,
  name: 'token-parents',
  script: `
ALTER TABLE api_tokens ADD COLUMN parent_id TEXT;
CREATE INDEX api_tokens_by_parent ON api_tokens (parent_id) WHERE parent_id IS NOT NULL;
DELETE FROM api_tokens WHERE label = 'web sign-in';
`,
};
