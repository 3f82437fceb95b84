import { isQuarryError } from '../shared/errors.ts';
import { ownerStore } from '../store/owner-store.ts';
import type { Store } from '../store/store.ts';
import { buildSnapshot } from './session-export.ts';

export interface MigrateStoreResult {
  users: number;
  /** Per session: copied, or skipped with the reason (a batch never stops halfway). */
  sessions: { id: string; status: 'copied' | 'skipped'; reason?: string }[];
}

/**
 * Copies every session (all owners) and every user from one store to another, each session in one
 * transaction on the target. Running sessions are skipped (stop them or let them finish first);
 * sessions already in the target are left alone. API tokens are stored hashed and are not copied:
 * issue new ones on the target.
 */
export async function migrateStore(
  source: Store,
  target: Store,
  options: { signal?: AbortSignal; onProgress?: (done: number) => void } = {},
): Promise<MigrateStoreResult> {
  const result: MigrateStoreResult = { users: 0, sessions: [] };
  const existingUsers = new Set((await target.listUsers()).map((user) => user.id));
  for (const user of await source.listUsers()) {
    if (existingUsers.has(user.id)) continue;
    await target.createUser({ id: user.id, name: user.name });
    result.users += 1;
  }
  let cursor: string | undefined;
  do {
    const page = await source.listSessions({ limit: 100, cursor });
    for (const session of page.sessions) {
      options.signal?.throwIfAborted();
      if (session.status === 'running') {
        result.sessions.push({
          id: session.id,
          status: 'skipped',
          reason: 'running; stop it or let it finish, then migrate again',
        });
        continue;
      }
      const existing = await target
        .getSession(session.id)
        .catch((error: unknown) => (isQuarryError(error, 'SESSION_NOT_FOUND') ? null : Promise.reject(error)));
      if (existing) {
        result.sessions.push({ id: session.id, status: 'skipped', reason: 'already in the target store' });
        continue;
      }
      const snapshot = await buildSnapshot(ownerStore(source, session.ownerId), session.id);
      await target.importSession(snapshot, { ownerId: session.ownerId });
      result.sessions.push({ id: session.id, status: 'copied' });
      options.onProgress?.(result.sessions.length);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return result;
}
