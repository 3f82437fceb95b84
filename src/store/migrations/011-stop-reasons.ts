import type { Migration } from './migration.ts';

/**
 * A stop request says why (`requestStop`'s reason), so the worker that stops and the terminal that
 * ran the session can tell a user's stop from a deletion.
 */
export const stopReasons: Migration = {
  version: 11,
  name: 'stop-reasons',
  script: `
ALTER TABLE sessions ADD COLUMN stop_reason TEXT;
`,
};
