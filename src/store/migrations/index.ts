import { sessionsAndJournal } from './001-sessions-and-journal.ts';
import { sourcesInboxUsers } from './002-sources-inbox-users.ts';
import { localCorpus } from './003-local-corpus.ts';
import type { Migration } from './migration.ts';

/** Every migration, oldest first. Append new ones; never edit a released one. */
export const migrations: readonly Migration[] = [sessionsAndJournal, sourcesInboxUsers, localCorpus];

export const latestSchemaVersion = migrations.length;
