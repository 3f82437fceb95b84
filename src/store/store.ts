/**
 * The session store: the one interface every backend implements and the conformance suite checks
 * (`src/store/conformance/`). Types and contracts only; no implementation lives here.
 *
 * Conventions that hold for every method:
 * - Times are milliseconds since the Unix epoch, read from the database clock.
 * - Unknown session ids throw `SESSION_NOT_FOUND`; invalid fields throw `INVALID_INPUT` naming the
 *   field; oversized payloads throw `PAYLOAD_TOO_LARGE`. A rejected call changes nothing.
 * - Methods that take an `ownerId` only see sessions of that owner; another owner's session is
 *   "not found". Omitting `ownerId` means "any owner" (trusted callers: the engine, workers).
 * - Methods that take a `fence` are writes by the worker that holds the session's lease. They check
 *   the lease epoch in the same transaction as the write and throw `LEASE_LOST` when another claim or
 *   a release happened since, without writing anything.
 */

import type { Accounts } from './accounts-contract.ts';
import type { Corpus } from './corpus-contract.ts';
import type { EventLog } from './events-contract.ts';
import type { Journal } from './journal-contract.ts';
import type { SessionStore } from './sessions-contract.ts';

// One file per concern, each with its interface, its input types and its argument schemas; the
// entities they share in store-entities.ts. Callers import every type from here.
export type { ErrorInfo } from '../shared/errors.ts';
export type { EventType, QuarryEvent, StoredEvent } from '../shared/events.ts';
export type { Accounts, ApiToken, User } from './accounts-contract.ts';
export type { CheckpointSnapshot } from './checkpoint-tables.ts';
export type {
  Corpus,
  CorpusDocument,
  PassageHit,
  PassageInput,
  SearchPassagesInput,
  UpsertDocumentInput,
} from './corpus-contract.ts';
export type { EventListener, EventLog } from './events-contract.ts';
export type {
  BeginStepInput,
  ClaimNextInput,
  ClaimSessionInput,
  CompleteStepInput,
  DeliverInputInput,
  DeliverInputResult,
  FailStepInput,
  HeartbeatResult,
  Journal,
  ListStepsOptions,
  RecordStepInput,
  ReleaseInput,
} from './journal-contract.ts';
export {
  type AppendMessageInput,
  type CreateSessionInput,
  type DeleteFinishedOptions,
  type FinishedStatus,
  type ForkSessionInput,
  finishedStatuses,
  type ListSessionsOptions,
  type SessionPage,
  type SessionStore,
  type StartRunInput,
  type StopResult,
  type UpdateSessionInput,
  type UpsertSourceInput,
} from './sessions-contract.ts';
export * from './store-entities.ts';

export interface StoreInfo {
  backend: 'sqlite' | 'postgres';
  /** File path or connection string without password. */
  location: string;
  schemaVersion: number;
  /** True when `subscribe` hears writes made by other processes without polling. */
  crossProcessNotifications: boolean;
}

/**
 * What the engine (runner, activation, run context) uses of the store: sessions, their journal and
 * their events; never the corpus or the accounts.
 */
export type EngineStore = SessionStore & Journal & EventLog;

/**
 * Everything a backend implements: each concern above, plus what the backend is and its closing.
 * Callers take the narrowest part they need (the indexer a `Corpus`, sign-in the `Accounts`).
 */
export interface Store extends SessionStore, Journal, EventLog, Corpus, Accounts {
  info(): StoreInfo;
  /** Closes the connections; any call after it throws `STORE_UNAVAILABLE`. */
  close(): Promise<void>;
}
