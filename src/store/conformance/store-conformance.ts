import { afterEach, beforeEach, describe } from 'vitest';
import { admissionCases } from './admission-cases.ts';
import { corpusCases } from './corpus-cases.ts';
import type { StoreHarness, TestDatabase } from './harness.ts';
import { journalCases } from './journal-cases.ts';
import { leaseCases } from './lease-cases.ts';
import { migrationCases } from './migration-cases.ts';
import {
  earlyAnswerCase,
  eventCases,
  forkAndRetentionCases,
  inboxCases,
  sourceAndBlobCases,
  userCases,
} from './record-cases.ts';
import { sessionCases } from './session-cases.ts';

/**
 * The store contract as tests. A backend joins with one call from its own test file; a backend
 * that cannot run here is skipped with the reason in the suite's name.
 */
export function describeStoreConformance(harness: StoreHarness, skipReason: string | null = null): void {
  const title = skipReason
    ? `store conformance: ${harness.name} (skipped: ${skipReason})`
    : `store conformance: ${harness.name}`;
  describe.skipIf(skipReason !== null)(title, () => {
    let database: TestDatabase;
    const use = () => database;
    beforeEach(async () => {
      database = await harness.create();
    });
    afterEach(async () => {
      await database.destroy();
    });
    describe('sessions and messages', () => sessionCases(use));
    describe('journal', () => journalCases(use));
    describe('leases', () => leaseCases(use));
    describe('events', () => eventCases(use));
    describe('inbox', () => {
      inboxCases(use);
      earlyAnswerCase(use);
    });
    describe('admission under per-owner limits', () => admissionCases(use));
    describe('users', () => userCases(use));
    describe('sources and blobs', () => sourceAndBlobCases(use));
    describe('fork and retention', () => forkAndRetentionCases(use));
    describe('local corpus', () => corpusCases(use));
    describe('migrations', () => migrationCases(harness));
  });
}
