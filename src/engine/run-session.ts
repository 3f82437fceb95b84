import type {
  Fence,
  Message,
  MessageRole,
  Run,
  Session,
  SessionStore,
  Source,
  UpsertSourceInput,
} from '../store/store.ts';

/**
 * The session a run belongs to, as its workflow reads and changes it. Bound to the run and the
 * lease of this activation: every write carries the run's id and the lease's fence, so a worker
 * that lost the session writes nothing (`LEASE_LOST`), and no workflow can forget the fence.
 */
export class RunSession {
  constructor(
    private readonly store: SessionStore,
    private readonly bound: { sessionId: string; runId: string; fence: Fence },
  ) {}

  /** The session row as it is now. */
  read(): Promise<Session> {
    return this.store.getSession(this.bound.sessionId);
  }

  /** Gives the session a new title. */
  rename(title: string): Promise<Session> {
    return this.store.updateSession(this.bound.sessionId, { title, fence: this.bound.fence });
  }

  /** Adds a message of this run to the conversation. */
  appendMessage(message: { role: MessageRole; content: string; phase?: string | null }): Promise<Message> {
    return this.store.appendMessage({
      ...message,
      sessionId: this.bound.sessionId,
      runId: this.bound.runId,
      fence: this.bound.fence,
    });
  }

  /** The conversation in order; `thisRun` keeps this run's messages only, `phase` one phase's. */
  messages(options: { thisRun?: boolean; phase?: string } = {}): Promise<Message[]> {
    return this.store.listMessages(this.bound.sessionId, {
      ...(options.thisRun ? { runId: this.bound.runId } : {}),
      ...(options.phase === undefined ? {} : { phase: options.phase }),
    });
  }

  /** The session's runs, oldest first. */
  runs(): Promise<Run[]> {
    return this.store.listRuns(this.bound.sessionId);
  }

  /** Records a source this run found or cited (counters add up; the URL is unique per session). */
  upsertSource(source: Omit<UpsertSourceInput, 'sessionId' | 'runId' | 'fence'>): Promise<Source> {
    return this.store.upsertSource({
      ...source,
      sessionId: this.bound.sessionId,
      runId: this.bound.runId,
      fence: this.bound.fence,
    });
  }
}
