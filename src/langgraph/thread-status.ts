import type { Checkpoint, PendingWrite } from '@langchain/langgraph-checkpoint';
import type { SessionStatus, Store } from '../store/store.ts';

/**
 * A LangGraph thread's status as `quarry ls` shows it, kept on its session by the saver: what the
 * latest checkpoint says, without the graph. LangGraph triggers a node through its `branch:to:<node>`
 * channel (the graph's `__start__` through `__start__`): a node is next when that channel holds a
 * value newer than the version the node last saw (`StateSnapshot.next`, as the graph computes it).
 * A thread with no next node has completed; one with a next node stopped before its end (a crash,
 * `interruptBefore`) and is `interrupted` until it is invoked again; an `interrupt()` pending (an `__interrupt__` write) is `waiting` for its
 * `Command({ resume })`; an `__error__` write is `failed`.
 */

/** The channel that triggers the graph's `__start__` node: a thread's input, before the graph ran on it. */
const START = '__start__';

/**
 * The nodes a checkpoint triggers next (what `getState(config).next` would list): a node through
 * its `branch:to:<node>` channel, and `__start__` through its own channel (the checkpoint of a
 * thread's input, which the graph has not run on yet).
 */
export function nextNodes(checkpoint: Pick<Checkpoint, 'channel_values' | 'channel_versions' | 'versions_seen'>) {
  const next: string[] = [];
  for (const [channel, version] of Object.entries(checkpoint.channel_versions ?? {})) {
    const node =
      channel === START ? START : channel.startsWith('branch:to:') ? channel.slice('branch:to:'.length) : null;
    if (node === null || !(channel in (checkpoint.channel_values ?? {}))) continue;
    const seen = checkpoint.versions_seen?.[node]?.[channel];
    if (seen === undefined || newer(version, seen)) next.push(node);
  }
  return next.sort();
}

function newer(version: string | number, seen: string | number): boolean {
  if (typeof version === 'number' && typeof seen === 'number') return version > seen;
  return String(version).localeCompare(String(seen), 'en', { numeric: true }) > 0;
}

/** The status a thread's writes give it, when they say (null: the checkpoint decides). */
export function statusOfWrites(writes: readonly PendingWrite[]): SessionStatus | null {
  if (writes.some(([channel]) => channel === '__error__')) return 'failed';
  if (writes.some(([channel]) => channel === '__interrupt__')) return 'waiting';
  return null;
}

/** Where a thread's known status came from: its newest checkpoint, or writes made on it. */
interface Known {
  status: SessionStatus;
  checkpointId: string;
  fromWrites: boolean;
}

/**
 * Writes a thread's status to its session when it changes (one write per change, not per
 * checkpoint). LangGraph puts a checkpoint while the next step runs, so a step's writes (an
 * interrupt) can arrive before the checkpoint they belong to: a status follows the newest checkpoint
 * (their ids sort by time), and on one checkpoint its writes outrank the checkpoint itself. Writes to
 * the session are made one at a time, in the order decided.
 */
export class ThreadStatuses {
  private readonly known = new Map<string, Known>();
  private readonly stored = new Map<string, SessionStatus>();
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly store: Pick<Store, 'updateSession'>) {}

  /** What the session already holds (read when the thread's session was found or made). */
  remember(sessionId: string, status: SessionStatus): void {
    if (!this.stored.has(sessionId)) this.stored.set(sessionId, status);
  }

  /** The status a checkpoint (`fromWrites`: writes made on it) gives its thread. */
  set(sessionId: string, checkpointId: string, status: SessionStatus, fromWrites: boolean): Promise<void> {
    const known = this.known.get(sessionId);
    if (
      known &&
      (known.checkpointId > checkpointId || (known.checkpointId === checkpointId && known.fromWrites && !fromWrites))
    )
      return this.queue;
    this.known.set(sessionId, { status, checkpointId, fromWrites });
    this.queue = this.queue
      .catch(() => undefined)
      .then(async () => {
        const wanted = this.known.get(sessionId)?.status;
        if (wanted === undefined || this.stored.get(sessionId) === wanted) return;
        await this.store.updateSession(sessionId, { status: wanted });
        this.stored.set(sessionId, wanted);
      });
    return this.queue;
  }

  forget(sessionId: string): void {
    this.known.delete(sessionId);
    this.stored.delete(sessionId);
  }
}
