/**
 * The tables behind `quarry/langgraph`'s checkpoint saver: LangGraph checkpoints of threads that are
 * Quarry sessions. Bytes are stored once by hash in the store's blobs (and collected with the
 * session); everything here is scoped by session, so deleting a thread is deleting its session.
 */

export interface CheckpointRow {
  sessionId: string;
  /** The thread id (the session's external id, without its `langgraph:` prefix). */
  threadId: string;
  ns: string;
  id: string;
  parentId: string | null;
  bodyType: string;
  body: Uint8Array;
  /** The checkpoint's metadata as JSON text. */
  metadata: string;
  /** For each channel with a value: the checkpoint that stored that value (its origin). */
  valueRefs: Record<string, string>;
}

export interface ChannelValueRow {
  channel: string;
  version: string;
  /** The checkpoint that stored this value. */
  origin: string;
  valueType: string;
  value: Uint8Array;
  /** Set when `value` holds only the items appended to the value stored as (`baseVersion`, `baseOrigin`). */
  baseVersion: string | null;
  baseOrigin: string | null;
}

export interface WriteRow {
  taskId: string;
  idx: number;
  channel: string;
  valueType: string;
  value: Uint8Array;
  taskPath: string;
}

/** A checkpoint as it is put (its thread is its session), with the values it stores itself. */
export interface PutCheckpointInput extends Omit<CheckpointRow, 'threadId'> {
  /** The values this checkpoint stores (its id is their origin). */
  values: Omit<ChannelValueRow, 'origin'>[];
}

export interface ListCheckpointsOptions {
  /** One session, or every LangGraph thread (of `ownerId`, when given) when omitted. */
  sessionId?: string;
  ownerId?: string;
  ns?: string;
  id?: string;
  /** Only checkpoints whose id sorts before this one. */
  before?: string;
  limit: number;
  /** Continue after this (session, ns, id) of the previous page, in listing order. */
  after?: { sessionId: string; ns: string; id: string };
}

export interface CheckpointTables {
  putCheckpoint(input: PutCheckpointInput): Promise<void>;
  /** One checkpoint, or the newest of the namespace when `id` is omitted. */
  getCheckpoint(sessionId: string, ns: string, id?: string): Promise<CheckpointRow | null>;
  /** Newest first: by session, namespace, then checkpoint id descending. */
  listCheckpoints(options: ListCheckpointsOptions): Promise<CheckpointRow[]>;
  /** A checkpoint's value references alone (cheap: no blobs read), or null. */
  valueRefs(sessionId: string, ns: string, id: string): Promise<Record<string, string> | null>;
  /** The values stored as these (channel, version, origin): what a checkpoint refers to. */
  channelValuesAt(
    sessionId: string,
    ns: string,
    wanted: { channel: string; version: string; origin: string }[],
  ): Promise<ChannelValueRow[]>;
  /** Every stored version of these channels (enough to rebuild any appended value). */
  channelValues(sessionId: string, ns: string, channels: string[]): Promise<ChannelValueRow[]>;
  /**
   * Stores writes. A write with a negative idx (LangGraph's special channels: errors, interrupts)
   * replaces the one stored under the same (task, idx); any other is kept as first stored.
   */
  putWrites(sessionId: string, ns: string, checkpointId: string, writes: WriteRow[]): Promise<void>;
  readWrites(sessionId: string, ns: string, checkpointId: string): Promise<WriteRow[]>;
}

/**
 * A LangGraph checkpoint of a thread, as export files carry it (`checkpoint-tables.ts` has the
 * stored rows): bytes as base64, with the channel values it stored itself and the writes made on it.
 */
export interface CheckpointSnapshot {
  ns: string;
  id: string;
  parentId: string | null;
  bodyType: string;
  /** base64 */
  body: string;
  /** JSON text. */
  metadata: string;
  valueRefs: Record<string, string>;
  values: {
    channel: string;
    version: string;
    valueType: string;
    /** base64 */
    value: string;
    baseVersion: string | null;
    baseOrigin: string | null;
  }[];
  writes: {
    taskId: string;
    idx: number;
    channel: string;
    valueType: string /** base64 */;
    value: string;
    taskPath: string;
  }[];
}

/** The external id a LangGraph thread's session carries. */
export const threadExternalId = (threadId: string) => `langgraph:${threadId}`;
