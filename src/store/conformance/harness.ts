import { randomUUID } from 'node:crypto';
import { within } from '../../../test/support/bounds.ts';
import type { Store, WorkflowRef } from '../store.ts';

/** One isolated, migrated database for one test. */
export interface TestDatabase {
  store: Store;
  /** What `QUARRY_DB` would say to reach this database from another process. */
  location: string;
  /** Another connection to the same database, as another process would have. */
  openAnother(): Promise<Store>;
  /** Raw SQL against the database (with `?` placeholders), for checks the interface cannot make. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  destroy(): Promise<void>;
}

/** What a backend provides to join the conformance suite. */
export interface StoreHarness {
  name: string;
  /** A fresh database; `targetSchemaVersion` stops the migrations early (upgrade tests). */
  create(options?: { targetSchemaVersion?: number }): Promise<TestDatabase>;
  /** An upgrade of the same database to the latest schema. */
  reopenLatest(database: TestDatabase): Promise<Store>;
}

export const testWorkflow: WorkflowRef = { name: 'test', version: 1 };

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** A session with a first run, ready to be claimed. */
export async function createTestSession(
  store: Store,
  overrides: {
    ownerId?: string;
    title?: string;
    question?: string;
    externalId?: string;
    workflow?: { name: string; version: number };
  } = {},
) {
  return store.createSession({
    ownerId: overrides.ownerId ?? 'local',
    ...(overrides.externalId ? { externalId: overrides.externalId } : {}),
    title: overrides.title ?? 'A test session',
    question: overrides.question ?? 'What is being tested?',
    workflow: overrides.workflow ?? testWorkflow,
    message: { role: 'user', content: overrides.question ?? 'What is being tested?' },
    run: { kind: 'initial', input: { question: overrides.question ?? 'What is being tested?' } },
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Resolves when `check` returns true, polling; rejects once the bound is past. `quietMs` is what a
 * quiet machine needs; the bound scales it (`within`), so a loaded machine only waits longer.
 */
export async function eventually(check: () => boolean | Promise<boolean>, quietMs = 5000): Promise<void> {
  // A bound already scaled (`within(…)` passed in) would wait ten times its scale: a hung condition
  // then outlived its test's own timeout (a watcher that stopped early held a test:unit run for minutes).
  if (quietMs > 120_000) throw new Error(`eventually: ${quietMs} ms is not a quiet machine's bound; pass it unscaled`);
  const timeoutMs = within(quietMs);
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}
