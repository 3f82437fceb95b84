import { expect, it } from 'vitest';
import { eventually } from '../store/conformance/harness.ts';
import type { Journal, Lease } from '../store/store.ts';
import { keepLease } from './lease.ts';

const lease: Lease = { sessionId: 's', workerId: 'w', epoch: 1, expiresAt: 0 };

it('gives a lease up once a heartbeat has gone unanswered past the TTL (a connection gone silent), once', async () => {
  let beats = 0;
  const silent = {
    heartbeat: () => {
      beats += 1;
      return new Promise(() => undefined);
    },
  } as unknown as Journal;
  let lost = 0;
  const keeper = keepLease({
    store: silent,
    lease,
    ttlMs: 200,
    intervalMs: 20,
    onLost: () => {
      lost += 1;
    },
    onStopRequested: () => undefined,
  });
  try {
    await eventually(() => lost > 0, 2_000);
    // The unanswered heartbeat is not sent again meanwhile, and the loss is told once.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(beats).toBe(1);
    expect(lost).toBe(1);
  } finally {
    keeper.stop();
  }
});
