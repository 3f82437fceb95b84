import { sessionsAndJournal } from './001-sessions-and-journal.ts';
import { sourcesInboxUsers } from './002-sources-inbox-users.ts';
import { localCorpus } from './003-local-corpus.ts';
import { linksTokensLeaseOwners } from './004-links-tokens-lease-owners.ts';
import { corpusFields } from './005-corpus-fields.ts';
import { journalFunctions } from './006-journal-functions.ts';
import { langGraphCheckpoints } from './007-langgraph-checkpoints.ts';
import { passagesInline } from './008-passages-inline.ts';
import { recordStepFunction } from './009-record-step-function.ts';
import { tokenParents } from './010-token-parents.ts';
import { stopReasons } from './011-stop-reasons.ts';
import { corpusDuplicates } from './012-corpus-duplicates.ts';
import { journalInOnePlace } from './013-journal-in-one-place.ts';
import { shareLinks } from './014-share-links.ts';
import { runTraceContext } from './015-run-trace-context.ts';
import { corpusReaderVersion } from './016-corpus-reader-version.ts';
import { eventOffsets64Bit } from './017-event-offsets-64-bit.ts';
import type { Migration } from './migration.ts';

/** Every migration, oldest first. Append new ones; never edit a released one. */
export const migrations: readonly Migration[] = [
  sessionsAndJournal,
  sourcesInboxUsers,
  localCorpus,
  linksTokensLeaseOwners,
  corpusFields,
  journalFunctions,
  langGraphCheckpoints,
  passagesInline,
  recordStepFunction,
  tokenParents,
  stopReasons,
  corpusDuplicates,
  journalInOnePlace,
  shareLinks,
  runTraceContext,
  corpusReaderVersion,
  eventOffsets64Bit,
];

export const latestSchemaVersion = migrations.length;
