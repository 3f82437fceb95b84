import type {
  ChannelValueRow,
  CheckpointRow,
  CheckpointTables,
  ListCheckpointsOptions,
  PutCheckpointInput,
  WriteRow,
} from '../checkpoint-tables.ts';
import type { CheckpointSnapshot, OwnerScope } from '../store.ts';
import { blobStatements, decodeObject, encodeJson, runWrites, type Statement } from './codec.ts';
import { readSession, type SqlContext } from './context.ts';
import type { SqlExecutor } from './sql-driver.ts';

type Row = Record<string, unknown>;

const bytes = (value: unknown): Uint8Array => (value instanceof Uint8Array ? value : Buffer.from(String(value)));
const blob = (column: string) => `(SELECT data FROM blobs WHERE hash = ${column})`;

const CHECKPOINT_SELECT = `SELECT c.session_id, s.external_id, c.checkpoint_ns, c.checkpoint_id, c.parent_id, c.body_type,
  ${blob('c.body_blob')} AS body, c.metadata, c.value_refs
  FROM lg_checkpoints c JOIN sessions s ON s.id = c.session_id`;

function toCheckpoint(row: Row): CheckpointRow {
  return {
    sessionId: String(row.session_id),
    threadId: String(row.external_id ?? '').replace(/^langgraph:/, ''),
    ns: String(row.checkpoint_ns),
    id: String(row.checkpoint_id),
    parentId: (row.parent_id as string | null) ?? null,
    bodyType: String(row.body_type),
    body: bytes(row.body),
    metadata: String(row.metadata),
    valueRefs: decodeObject(row.value_refs) as Record<string, string>,
  };
}

const VALUE_SELECT = `SELECT channel, version, origin, value_type, ${blob('value_blob')} AS value, base_version, base_origin
  FROM lg_channel_values`;

function toValue(row: Row): ChannelValueRow {
  return {
    channel: String(row.channel),
    version: String(row.version),
    origin: String(row.origin),
    valueType: String(row.value_type),
    value: bytes(row.value),
    baseVersion: (row.base_version as string | null) ?? null,
    baseOrigin: (row.base_origin as string | null) ?? null,
  };
}

/** LangGraph's checkpoint tables, in SQL written once for both databases. */
export function checkpointTables(ctx: SqlContext): CheckpointTables {
  return {
    // One statement on PostgreSQL (a checkpoint is put while the graph's next step runs).
    putCheckpoint: async (input: PutCheckpointInput) => {
      await runWrites(ctx.driver, checkpointStatements(ctx.now, input));
    },

    async getCheckpoint(sessionId, ns, id) {
      const rows = await ctx.driver.query<Row>(
        id === undefined
          ? `${CHECKPOINT_SELECT} WHERE c.session_id = ? AND c.checkpoint_ns = ? ORDER BY c.checkpoint_id DESC LIMIT 1`
          : `${CHECKPOINT_SELECT} WHERE c.session_id = ? AND c.checkpoint_ns = ? AND c.checkpoint_id = ?`,
        id === undefined ? [sessionId, ns] : [sessionId, ns, id],
      );
      return rows[0] ? toCheckpoint(rows[0]) : null;
    },

    async listCheckpoints(options: ListCheckpointsOptions) {
      const where: string[] = ["s.workflow_name = 'langgraph'"];
      const params: unknown[] = [];
      const add = (clause: string, ...values: unknown[]) => {
        where.push(clause);
        params.push(...values);
      };
      if (options.sessionId !== undefined) add('c.session_id = ?', options.sessionId);
      if (options.ownerId !== undefined) add('s.owner_id = ?', options.ownerId);
      if (options.ns !== undefined) add('c.checkpoint_ns = ?', options.ns);
      if (options.id !== undefined) add('c.checkpoint_id = ?', options.id);
      if (options.before !== undefined) add('c.checkpoint_id < ?', options.before);
      if (options.after) {
        const { sessionId, ns, id } = options.after;
        add(
          '(c.session_id > ? OR (c.session_id = ? AND (c.checkpoint_ns > ? OR (c.checkpoint_ns = ? AND c.checkpoint_id < ?))))',
          sessionId,
          sessionId,
          ns,
          ns,
          id,
        );
      }
      const rows = await ctx.driver.query<Row>(
        `${CHECKPOINT_SELECT} WHERE ${where.join(' AND ')}
         ORDER BY c.session_id, c.checkpoint_ns, c.checkpoint_id DESC LIMIT ?`,
        [...params, options.limit],
      );
      return rows.map(toCheckpoint);
    },

    async valueRefs(sessionId, ns, id) {
      const rows = await ctx.driver.query<Row>(
        'SELECT value_refs FROM lg_checkpoints WHERE session_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?',
        [sessionId, ns, id],
      );
      return rows[0] ? (decodeObject(rows[0].value_refs) as Record<string, string>) : null;
    },

    async channelValuesAt(sessionId, ns, wanted) {
      if (wanted.length === 0) return [];
      const rows = await ctx.driver.query<Row>(
        `${VALUE_SELECT} WHERE session_id = ? AND checkpoint_ns = ? AND (${wanted.map(() => '(channel = ? AND version = ? AND origin = ?)').join(' OR ')})`,
        [sessionId, ns, ...wanted.flatMap((each) => [each.channel, each.version, each.origin])],
      );
      return rows.map(toValue);
    },

    async channelValues(sessionId, ns, channels) {
      if (channels.length === 0) return [];
      const rows = await ctx.driver.query<Row>(
        `${VALUE_SELECT} WHERE session_id = ? AND checkpoint_ns = ? AND channel IN (${channels.map(() => '?').join(', ')})`,
        [sessionId, ns, ...channels],
      );
      return rows.map(toValue);
    },
    async putWrites(sessionId, ns, checkpointId, writes) {
      await runWrites(ctx.driver, writeStatements(ctx.now, sessionId, ns, checkpointId, writes));
    },

    async readWrites(sessionId, ns, checkpointId) {
      const rows = await ctx.driver.query<Row>(
        `SELECT task_id, idx, channel, value_type, ${blob('value_blob')} AS value, task_path FROM lg_writes
         WHERE session_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`,
        [sessionId, ns, checkpointId],
      );
      return rows.map(
        (row): WriteRow => ({
          taskId: String(row.task_id),
          idx: Number(row.idx),
          channel: String(row.channel),
          valueType: String(row.value_type),
          value: bytes(row.value),
          taskPath: String(row.task_path),
        }),
      );
    },
  };
}

/** The statements that put a checkpoint: its blobs, the values it stores, its row, the session's `updated_at`. */
function checkpointStatements(nowMs: string, input: PutCheckpointInput): Statement[] {
  const {
    hashes: [body, ...hashes],
    statements,
  } = blobStatements(nowMs, input.sessionId, [input.body, ...input.values.map((value) => value.value)]);
  // Every value in one statement (a checkpoint stores one version per channel).
  if (input.values.length > 0)
    statements.push({
      sql: `INSERT INTO lg_channel_values (session_id, checkpoint_ns, channel, version, origin, value_type, value_blob, base_version, base_origin)
         VALUES ${input.values.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
         ON CONFLICT (session_id, checkpoint_ns, channel, version, origin) DO UPDATE SET value_type = excluded.value_type,
           value_blob = excluded.value_blob, base_version = excluded.base_version, base_origin = excluded.base_origin`,
      params: input.values.flatMap((value, index) => [
        input.sessionId,
        input.ns,
        value.channel,
        value.version,
        input.id,
        value.valueType,
        hashes[index],
        value.baseVersion,
        value.baseOrigin,
      ]),
    });
  statements.push(
    {
      sql: `INSERT INTO lg_checkpoints (session_id, checkpoint_ns, checkpoint_id, parent_id, body_type, body_blob, metadata, value_refs, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ${nowMs})
       ON CONFLICT (session_id, checkpoint_ns, checkpoint_id)
       DO UPDATE SET parent_id = excluded.parent_id, body_type = excluded.body_type, body_blob = excluded.body_blob,
         metadata = excluded.metadata, value_refs = excluded.value_refs`,
      params: [
        input.sessionId,
        input.ns,
        input.id,
        input.parentId,
        input.bodyType,
        body,
        input.metadata,
        encodeJson(input.valueRefs),
      ],
    },
    { sql: `UPDATE sessions SET updated_at = ${nowMs} WHERE id = ?`, params: [input.sessionId] },
  );
  return statements;
}

/** The statements that put a task's writes on a checkpoint: their blobs and rows. */
function writeStatements(
  nowMs: string,
  sessionId: string,
  ns: string,
  checkpointId: string,
  writes: readonly WriteRow[],
): Statement[] {
  const { hashes, statements } = blobStatements(
    nowMs,
    sessionId,
    writes.map((write) => write.value),
  );
  // One statement per kind of write: special writes (errors, interrupts: idx < 0) replace the
  // task's earlier one, ordinary writes are kept as first written.
  for (const special of [false, true]) {
    const rows = writes.flatMap((write, index) => (write.idx < 0 === special ? [{ write, hash: hashes[index] }] : []));
    if (rows.length === 0) continue;
    statements.push({
      sql: `INSERT INTO lg_writes (session_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value_type, value_blob, task_path)
         VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
         ON CONFLICT (session_id, checkpoint_ns, checkpoint_id, task_id, idx) ${
           special
             ? 'DO UPDATE SET channel = excluded.channel, value_type = excluded.value_type, value_blob = excluded.value_blob, task_path = excluded.task_path'
             : 'DO NOTHING'
         }`,
      params: rows.flatMap(({ write, hash }) => [
        sessionId,
        ns,
        checkpointId,
        write.taskId,
        write.idx,
        write.channel,
        write.valueType,
        hash,
        write.taskPath,
      ]),
    });
  }
  return statements;
}

const base64 = (value: unknown) => Buffer.from(bytes(value)).toString('base64');

/** A LangGraph thread's checkpoints, with their values and writes, as export files carry them. */
export async function listCheckpointSnapshots(
  ctx: SqlContext,
  sessionId: string,
  scope: OwnerScope = {},
): Promise<CheckpointSnapshot[]> {
  await readSession(ctx, ctx.driver, sessionId, scope);
  const [checkpoints, values, writes] = await Promise.all([
    ctx.driver.query<Row>(`${CHECKPOINT_SELECT} WHERE c.session_id = ? ORDER BY c.checkpoint_ns, c.checkpoint_id`, [
      sessionId,
    ]),
    ctx.driver.query<Row>(`${VALUE_SELECT.replace('SELECT ', 'SELECT checkpoint_ns, ')} WHERE session_id = ?`, [
      sessionId,
    ]),
    ctx.driver.query<Row>(
      `SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, value_type, ${blob('value_blob')} AS value, task_path
       FROM lg_writes WHERE session_id = ? ORDER BY task_id, idx`,
      [sessionId],
    ),
  ]);
  const of = (row: Row) => `${row.checkpoint_ns}\u0000${row.origin ?? row.checkpoint_id}`;
  return checkpoints.map((row) => {
    const checkpoint = toCheckpoint(row);
    const key = `${checkpoint.ns}\u0000${checkpoint.id}`;
    return {
      ns: checkpoint.ns,
      id: checkpoint.id,
      parentId: checkpoint.parentId,
      bodyType: checkpoint.bodyType,
      body: base64(checkpoint.body),
      metadata: checkpoint.metadata,
      valueRefs: checkpoint.valueRefs,
      values: values
        .filter((value) => of(value) === key)
        .map((value) => {
          const { channel, version, valueType, baseVersion, baseOrigin } = toValue(value);
          return { channel, version, valueType, value: base64(value.value), baseVersion, baseOrigin };
        }),
      writes: writes
        .filter((write) => of(write) === key)
        .map((write) => ({
          taskId: String(write.task_id),
          idx: Number(write.idx),
          channel: String(write.channel),
          valueType: String(write.value_type),
          value: base64(write.value),
          taskPath: String(write.task_path),
        })),
    };
  });
}

/**
 * Writes an imported thread's checkpoints, values and writes under `sessionId` inside the import's
 * transaction: the same statements a put makes.
 */
export async function importCheckpointsInTx(
  ctx: SqlContext,
  tx: SqlExecutor,
  sessionId: string,
  checkpoints: readonly CheckpointSnapshot[],
): Promise<void> {
  const bytes = (text: string) => Buffer.from(text, 'base64');
  for (const checkpoint of checkpoints) {
    const statements = checkpointStatements(ctx.now, {
      sessionId,
      ns: checkpoint.ns,
      id: checkpoint.id,
      parentId: checkpoint.parentId,
      bodyType: checkpoint.bodyType,
      body: bytes(checkpoint.body),
      metadata: checkpoint.metadata,
      valueRefs: checkpoint.valueRefs,
      values: checkpoint.values.map((value) => ({ ...value, value: bytes(value.value) })),
    });
    if (checkpoint.writes.length > 0)
      statements.push(
        ...writeStatements(
          ctx.now,
          sessionId,
          checkpoint.ns,
          checkpoint.id,
          checkpoint.writes.map((write) => ({ ...write, value: bytes(write.value) })),
        ),
      );
    for (const statement of statements) await tx.query(statement.sql, statement.params);
  }
}
