import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { within } from '../../../test/support/bounds.ts';
import { openStore } from '../open-store.ts';
import { WAL_BOUND_BYTES } from './sqlite-driver.ts';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

it('keeps the WAL bounded under writes that never pause', { timeout: within(60_000) }, async () => {
  const folder = mkdtempSync(join(tmpdir(), 'quarry-wal-'));
  folders.push(folder);
  const path = join(folder, 'quarry.db');
  const store = await openStore({ db: path });
  try {
    const session = await store.createSession({
      ownerId: 'local',
      title: 'busy',
      question: 'busy',
      workflow: { name: 'test', version: 1 },
    });
    const walBytes = () => {
      try {
        return statSync(`${path}-wal`).size;
      } catch {
        return 0;
      }
    };
    // 48 MB written in back-to-back commits of 64 KB: no pause for the idle checkpoint to run in.
    let largest = 0;
    for (let write = 0; write < 768; write++) {
      await store.putBlob(session.id, randomBytes(64 * 1024));
      largest = Math.max(largest, walBytes());
    }
    // The bound, plus the commit that crossed it.
    expect(largest).toBeLessThanOrEqual(WAL_BOUND_BYTES + 1024 * 1024);
  } finally {
    await store.close();
  }
});
