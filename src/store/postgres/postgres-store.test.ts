import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../conformance/harness.ts';
import { describeStoreConformance } from '../conformance/store-conformance.ts';
import { postgresHarness, postgresSkipReason } from './postgres-harness.ts';

describeStoreConformance(postgresHarness, postgresSkipReason());

describe.skipIf(postgresSkipReason() !== null)('PostgreSQL corpus layout', () => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await postgresHarness.create();
  });
  afterEach(async () => {
    await database.destroy();
  });

  it("keeps a passage's text and tsvector in its row, not in TOAST, where ranking would fetch each", async () => {
    // A long passage (1,450 characters of prose; the chunker's passages reach 1,600): with PostgreSQL's
    // default column storage its row passes the TOAST threshold and the tsvector moves out. (Of the
    // PostgreSQL manual's passages 4% are this long; of the generated benchmark corpus's, nearly all.)
    const text = [
      'A checkpoint writes every dirty page of the shared buffer pool to its data file and records the',
      'position in the write-ahead log from which a recovery would start replaying. Checkpoints happen',
      'when the configured interval elapses or when enough log has been written since the previous one,',
      'whichever comes first; an administrator can also request one explicitly. Spreading the writes over',
      'a large part of the interval keeps input and output steady, at the price of a longer recovery after',
      'a crash, because more log must be replayed. Replication standbys perform restartpoints instead,',
      'which follow the checkpoints recorded by the primary server and cannot occur more often than they.',
      'Autovacuum workers visit tables whose dead tuples exceed a threshold, mark their space reusable,',
      'refresh planner statistics, freeze old transaction identifiers to prevent wraparound, and update',
      'the visibility map so that index-only scans can skip heap fetches. Their cost-based delay throttles',
      'disk traffic; raising the limit lets them finish sooner on busy systems. Bloated indexes may still',
      'need rebuilding concurrently, because ordinary vacuuming reclaims entries but rarely shrinks files.',
      'Monitoring views report progress, phases, scanned blocks and elapsed durations for each worker.',
    ].join(' ');
    await database.store.upsertDocument({
      path: '/docs/manual/page.html',
      title: 'A page of the manual about many things',
      kind: 'html',
      size: text.length,
      mtimeMs: 1_700_000_000_000,
      contentHash: 'c'.repeat(64),
      chars: text.length,
      navigation: false,
      passages: Array.from({ length: 20 }, (_, position) => ({
        start: position * text.length,
        end: (position + 1) * text.length,
        text,
        headings: 'Manual › Chapter › Section',
        linkDensity: 0,
      })),
    });
    const [table] = await database.query<{ toast: string }>(
      "SELECT reltoastrelid::regclass::text AS toast FROM pg_class WHERE oid = 'corpus_passages'::regclass",
    );
    const [toasted] = await database.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table!.toast}`);
    expect(Number(toasted!.n)).toBe(0);
    const hits = await database.store.searchPassages({ query: 'recovery replaying standbys' });
    expect(hits).toHaveLength(10);
  });

  it('plans for data in memory on its own connections (a random page costs 1.1, not a disk seek)', async () => {
    const [setting] = await database.query<{ random_page_cost: string }>('SHOW random_page_cost');
    expect(setting!.random_page_cost).toBe('1.1');
  });
});
