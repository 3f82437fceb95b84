import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  getCheckpointId,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import { isQuarryError, QuarryError } from '../shared/errors.ts';
import type { ChannelValueRow, CheckpointRow, CheckpointTables } from '../store/checkpoint-tables.ts';
import { openCheckpointStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { pack, unpack } from './packed-bytes.ts';
import { ThreadSessions } from './thread-sessions.ts';
import { nextNodes, statusOfWrites, ThreadStatuses } from './thread-status.ts';

/**
 * The owner of LangGraph threads unless the saver is opened as a user: the local user, so `quarry ls`
 * and the loopback web UI list them.
 */
const LOCAL_THREAD_OWNER = 'local';
const LIST_PAGE = 100;

/** What the saver remembers of a list channel's newest stored value, to store the next as what was appended. */
interface Grown {
  version: string;
  origin: string;
  value: unknown[];
}

function required(config: RunnableConfig, field: 'thread_id' | 'checkpoint_id', action: string): string {
  const value = config.configurable?.[field];
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new Error(`Failed to ${action}: the config's "configurable" has no "${field}".`);
  return String(value);
}

/**
 * A LangGraph.js checkpoint saver backed by Quarry's store, on SQLite or PostgreSQL alike. A thread
 * is a Quarry session (so `quarry ls`, `show`, `rm` and retention apply to it). A checkpoint is
 * stored without its channel values; each channel version is stored once, as a content-addressed
 * blob shared by every checkpoint and fork that holds it, and a list channel that grew by appending
 * (messages, logs) is stored as its new items on top of the version it grew from: storage grows
 * with what changed, not with the state's size.
 */
export class QuarrySaver extends BaseCheckpointSaver {
  private readonly grown = new Map<string, Grown>();
  /** The value references of the newest checkpoint put per (session, namespace): usually the next one's parent. */
  private readonly lastRefs = new Map<string, { id: string; refs: Record<string, string> }>();
  /** Each thread's status on its session, as its latest checkpoint and writes say (`thread-status.ts`). */
  private readonly statuses: ThreadStatuses;
  /** Each thread's session, found or made once per thread. */
  private readonly threads: ThreadSessions;

  constructor(
    private readonly store: Store,
    private readonly tables: CheckpointTables,
    serde?: SerializerProtocol,
    /** Whose sessions the threads are: the local user's, or a user's id. */
    private readonly ownerId = LOCAL_THREAD_OWNER,
  ) {
    super(serde);
    this.statuses = new ThreadStatuses(store);
    this.threads = new ThreadSessions(store, ownerId, this.statuses);
  }

  /**
   * Opens (creating and migrating on first use) a store: a SQLite file path or a `postgres://` URL.
   * `user`: the threads are that user's sessions (`quarry users add <name>`), so they see them in the
   * web UI and the API, and a thread they imported there is continued; without it, the local user's.
   */
  static async open(
    location: string,
    options: { serde?: SerializerProtocol; user?: string } = {},
  ): Promise<QuarrySaver> {
    const { store, tables } = await openCheckpointStore({ db: location });
    if (options.user === undefined) return new QuarrySaver(store, tables, options.serde);
    const user = (await store.listUsers()).find((each) => each.name === options.user);
    if (!user) {
      await store.close();
      throw new QuarryError(
        'USER_NOT_FOUND',
        `No user named "${options.user}" in this store. Add one with: quarry users add ${options.user}`,
        { details: { name: options.user } },
      );
    }
    return new QuarrySaver(store, tables, options.serde, user.id);
  }

  /** Closes the store (and its connections). */
  async close(): Promise<void> {
    await this.store.close();
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id;
    if (threadId === undefined) return undefined;
    const sessionId = await this.threads.sessionOf(String(threadId), false);
    if (!sessionId) return undefined;
    const ns = String(config.configurable?.checkpoint_ns ?? '');
    const row = await this.tables.getCheckpoint(sessionId, ns, getCheckpointId(config) || undefined);
    return row ? this.toTuple(row) : undefined;
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const threadId = config.configurable?.thread_id;
    let sessionId: string | undefined;
    if (threadId !== undefined) {
      const found = await this.threads.sessionOf(String(threadId), false);
      if (!found) return;
      sessionId = found;
    }
    const ns = config.configurable?.checkpoint_ns as string | undefined;
    const id = getCheckpointId(config) || undefined;
    const before = options.before ? getCheckpointId(options.before) || undefined : undefined;
    const where = { sessionId, ownerId: this.ownerId, ns, id, before, limit: LIST_PAGE };
    const filter = Object.entries(options.filter ?? {});
    let left = options.limit ?? Number.POSITIVE_INFINITY;
    let after: CheckpointRow | undefined;
    while (left > 0) {
      const rows = await this.tables.listCheckpoints({ ...where, after });
      for (const row of rows) {
        if (filter.length > 0) {
          const metadata = JSON.parse(row.metadata) as Record<string, unknown>;
          if (!filter.every(([key, value]) => JSON.stringify(metadata[key]) === JSON.stringify(value))) continue;
        }
        yield await this.toTuple(row);
        if (--left <= 0) return;
      }
      if (rows.length < LIST_PAGE) return;
      after = rows.at(-1);
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = required(config, 'thread_id', 'put a checkpoint');
    const ns = String(config.configurable?.checkpoint_ns ?? '');
    const parentId = (config.configurable?.checkpoint_id as string | undefined) ?? null;
    const { channel_values: values, ...body } = checkpoint;
    // Everything is serialized before the first await: LangGraph goes on with the next step (and may
    // change the state's arrays) while a checkpoint is being written.
    const inherited: string[] = [];
    const serialized: { channel: string; version: string; bytes: Promise<[string, Uint8Array]>; base: Grown | null }[] =
      [];
    for (const [channel, value] of Object.entries(values as Record<string, unknown>)) {
      const version = checkpoint.channel_versions[channel];
      if (version === undefined) continue;
      // Only new versions are stored; a value this checkpoint did not change is the one its parent refers to.
      if (!(channel in newVersions)) {
        inherited.push(channel);
        continue;
      }
      const key = `${threadId}\u0000${ns}\u0000${channel}`;
      const before = this.grown.get(key);
      // Grown by appending: an array whose first items are the very items (the same objects) the value
      // before held when it was stored. Like LangGraph's own reducers, this assumes an item already in
      // the state is replaced, never edited in place.
      const appended =
        before !== undefined &&
        Array.isArray(value) &&
        value.length >= before.value.length &&
        before.value.every((item, index) => value[index] === item);
      const stored = appended ? value.slice(before.value.length) : value;
      serialized.push({
        channel,
        version: String(version),
        bytes: this.serde.dumpsTyped(stored),
        base: appended ? before : null,
      });
      // A copy of the array (not of its items): an array pushed to in place is still compared with what was stored.
      if (Array.isArray(value))
        this.grown.set(key, { version: String(version), origin: checkpoint.id, value: [...value] });
      else this.grown.delete(key);
    }
    const bodyBytes = this.serde.dumpsTyped(body);
    const metadataBytes = this.serde.dumpsTyped(metadata);

    const sessionId = (await this.threads.sessionOf(threadId, true))!;
    const parentRefs = parentId ? await this.refsOf(sessionId, ns, parentId) : {};
    const valueRefs: Record<string, string> = {};
    for (const channel of inherited) if (parentRefs[channel]) valueRefs[channel] = parentRefs[channel];
    const stored: Parameters<CheckpointTables['putCheckpoint']>[0]['values'] = [];
    for (const value of serialized) {
      valueRefs[value.channel] = checkpoint.id;
      const [valueType, bytes] = pack(await value.bytes);
      stored.push({
        channel: value.channel,
        version: value.version,
        valueType,
        value: bytes,
        baseVersion: value.base?.version ?? null,
        baseOrigin: value.base?.origin ?? null,
      });
    }
    const [bodyType, bodyPacked] = pack(await bodyBytes);
    const [, metadataJson] = await metadataBytes;
    await this.tables.putCheckpoint({
      sessionId,
      ns,
      id: checkpoint.id,
      parentId,
      bodyType,
      body: bodyPacked,
      metadata: new TextDecoder().decode(metadataJson),
      valueRefs,
      values: stored,
    });
    this.lastRefs.set(`${sessionId}\u0000${ns}`, { id: checkpoint.id, refs: valueRefs });
    // The thread's own graph (not a subgraph's namespace) says where the thread stands.
    if (ns === '')
      await this.statuses.set(
        sessionId,
        checkpoint.id,
        nextNodes(checkpoint).length > 0 ? 'interrupted' : 'completed',
        false,
      );
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  /** A checkpoint's value references: remembered from the last put, else read. */
  private async refsOf(sessionId: string, ns: string, id: string): Promise<Record<string, string>> {
    const last = this.lastRefs.get(`${sessionId}\u0000${ns}`);
    if (last?.id === id) return last.refs;
    return (await this.tables.valueRefs(sessionId, ns, id)) ?? {};
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ''): Promise<void> {
    const threadId = required(config, 'thread_id', 'put writes');
    const checkpointId = required(config, 'checkpoint_id', 'put writes');
    const ns = String(config.configurable?.checkpoint_ns ?? '');
    const sessionId = (await this.threads.sessionOf(threadId, true))!;
    const rows = await Promise.all(
      writes.map(async ([channel, value], index) => {
        const [valueType, bytes] = pack(await this.serde.dumpsTyped(value));
        return { taskId, idx: WRITES_IDX_MAP[channel] ?? index, channel, valueType, value: bytes, taskPath };
      }),
    );
    await this.tables.putWrites(sessionId, ns, checkpointId, rows);
    const status = ns === '' ? statusOfWrites(writes) : null;
    if (status) await this.statuses.set(sessionId, checkpointId, status, true);
  }

  async deleteThread(threadId: string): Promise<void> {
    const sessionId = await this.threads.sessionOf(String(threadId), false);
    this.threads.forget(String(threadId));
    if (sessionId) this.statuses.forget(sessionId);
    for (const key of this.grown.keys()) if (key.startsWith(`${threadId}\u0000`)) this.grown.delete(key);
    if (!sessionId) return;
    try {
      await this.store.deleteSession(sessionId);
    } catch (error) {
      if (!isQuarryError(error) || error.code !== 'SESSION_NOT_FOUND') throw error;
    }
  }

  private load(type: string, bytes: Uint8Array): Promise<unknown> {
    return this.serde.loadsTyped(...unpack(type, bytes));
  }

  /** A stored checkpoint with its channel values rebuilt and its pending writes in LangGraph's order. */
  private async toTuple(row: CheckpointRow): Promise<CheckpointTuple> {
    const body = (await this.load(row.bodyType, row.body)) as Omit<Checkpoint, 'channel_values'>;
    const versions = body.channel_versions ?? {};
    // The values the checkpoint refers to; the whole history only of channels stored as appends.
    const wanted = Object.entries(versions).flatMap(([channel, version]) =>
      row.valueRefs[channel] ? [{ channel, version: String(version), origin: row.valueRefs[channel] }] : [],
    );
    const exact = await this.tables.channelValuesAt(row.sessionId, row.ns, wanted);
    const grown = [...new Set(exact.filter((value) => value.baseVersion !== null).map((value) => value.channel))];
    const history = [
      ...exact.filter((value) => value.baseVersion === null),
      ...(await this.tables.channelValues(row.sessionId, row.ns, grown)),
    ];
    const channelValues: Record<string, unknown> = {};
    for (const [channel, version] of Object.entries(versions)) {
      const origin = row.valueRefs[channel];
      if (origin === undefined) continue;
      const value = await this.rebuild(history, channel, String(version), origin);
      if (value !== undefined) channelValues[channel] = value;
    }
    const writes = await this.tables.readWrites(row.sessionId, row.ns, row.id);
    writes.sort((a, b) =>
      compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx)),
    );
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      writes.map(
        async (write) =>
          [write.taskId, write.channel, await this.load(write.valueType, write.value)] as CheckpointPendingWrite,
      ),
    );
    const checkpoint = { ...body, channel_values: channelValues } as Checkpoint;
    if (checkpoint.v < 4 && row.parentId) await this.migratePendingSends(checkpoint, row);
    const configurable = { thread_id: row.threadId, checkpoint_ns: row.ns };
    return {
      config: { configurable: { ...configurable, checkpoint_id: row.id } },
      checkpoint,
      metadata: JSON.parse(row.metadata) as CheckpointMetadata,
      pendingWrites,
      ...(row.parentId ? { parentConfig: { configurable: { ...configurable, checkpoint_id: row.parentId } } } : {}),
    };
  }

  /**
   * Checkpoints written before format 4 kept pending sends as writes of their parent: they move into
   * the checkpoint's own tasks channel, as LangGraph expects of every saver.
   */
  private async migratePendingSends(checkpoint: Checkpoint, row: CheckpointRow): Promise<void> {
    const writes = (await this.tables.readWrites(row.sessionId, row.ns, row.parentId!))
      .filter((write) => write.channel === TASKS)
      .sort((a, b) =>
        compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx)),
      );
    const sends = await Promise.all(writes.map((write) => this.load(write.valueType, write.value)));
    (checkpoint.channel_values as Record<string, unknown>)[TASKS] = sends;
    const versions = Object.values(checkpoint.channel_versions);
    (checkpoint.channel_versions as Record<string, string | number>)[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  /** A channel's value as one checkpoint stored it: whole, or the value it grew from plus what was appended. */
  private async rebuild(
    history: ChannelValueRow[],
    channel: string,
    version: string,
    origin: string,
  ): Promise<unknown> {
    const byKey = new Map<string, ChannelValueRow>();
    for (const row of history) if (row.channel === channel) byKey.set(`${row.version}\u0000${row.origin}`, row);
    const find = (wanted: string, from: string) => byKey.get(`${wanted}\u0000${from}`);
    let found = find(version, origin);
    // A reference to another version than the checkpoint's own names no value of it.
    if (!found) return undefined;
    const chain: ChannelValueRow[] = [];
    while (found) {
      chain.push(found);
      if (found.baseVersion === null) break;
      const base: ChannelValueRow | undefined = find(found.baseVersion, found.baseOrigin ?? found.origin);
      if (!base) throw new Error(`The stored value of channel ${channel} at version ${found.baseVersion} is missing.`);
      found = base;
    }
    let value: unknown;
    for (const row of chain.reverse()) {
      const loaded = await this.load(row.valueType, row.value);
      value = row.baseVersion === null ? loaded : [...(value as unknown[]), ...(loaded as unknown[])];
    }
    return value;
  }
}
