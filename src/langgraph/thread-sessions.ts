import { threadExternalId } from '../store/checkpoint-tables.ts';
import type { Store } from '../store/store.ts';
import type { ThreadStatuses } from './thread-status.ts';

/**
 * Which Quarry session holds each LangGraph thread: looked up (or made, on the thread's first write)
 * once per thread, by the session's external id `langgraph:<thread>` among the owner's sessions.
 */
export class ThreadSessions {
  private readonly sessions = new Map<string, Promise<string | null>>();

  constructor(
    private readonly store: Pick<Store, 'findSessionByExternalId' | 'createSession'>,
    private readonly ownerId: string,
    private readonly statuses: ThreadStatuses,
  ) {}

  /** The session of a thread (null: none yet); made when `create`. */
  sessionOf(threadId: string, create: boolean): Promise<string | null> {
    const known = this.sessions.get(threadId);
    if (known) return known;
    // One lookup (or creation) per thread at a time: LangGraph writes a step's tasks in parallel.
    const found = this.findOrCreate(threadId, create).then((id) => {
      if (id === null) this.sessions.delete(threadId);
      return id;
    });
    this.sessions.set(threadId, found);
    found.catch(() => this.sessions.delete(threadId));
    return found;
  }

  /** Forgets a thread (deleted): its next write makes a new session. */
  forget(threadId: string): void {
    this.sessions.delete(threadId);
  }

  private async findOrCreate(threadId: string, create: boolean): Promise<string | null> {
    const externalId = threadExternalId(threadId);
    const find = async () => {
      const found = await this.store.findSessionByExternalId(externalId, { ownerId: this.ownerId });
      if (found) this.statuses.remember(found.id, found.status);
      return found?.id ?? null;
    };
    if (!create) return find();
    // LangGraph reads a thread before it writes, so a thread not known here yet is almost always new:
    // it is made at once, and its first writes wait for one round trip fewer (bench/compare,
    // saver crash). One that exists after all is found on the conflict.
    try {
      const session = await this.store.createSession({
        ownerId: this.ownerId,
        title: `LangGraph thread ${threadId}`.slice(0, 300),
        question: `LangGraph thread ${threadId}`,
        workflow: { name: 'langgraph', version: 1 },
        // Parked: LangGraph runs the thread, never Quarry's runner.
        status: 'interrupted',
        externalId,
      });
      this.statuses.remember(session.id, session.status);
      return session.id;
    } catch (error) {
      const theirs = await find();
      if (theirs === null) throw error;
      return theirs;
    }
  }
}
