import type { Migration } from './migration.ts';

/**
 * Event offsets are 64-bit on PostgreSQL, as they always were on SQLite: a client may ask for the
 * events after any offset up to 2^53, and a 32-bit column refused the comparison (a 500) past 2^31.
 */
export const eventOffsets64Bit: Migration = {
  version: 17,
  name: 'event-offsets-64-bit',
  script: '-- SQLite integers are 64-bit already.',
  dialects: {
    postgres: `
ALTER TABLE events ALTER COLUMN event_offset TYPE BIGINT;
ALTER TABLE sessions ALTER COLUMN last_event_offset TYPE BIGINT;
`,
  },
};
