import { createHash, randomUUID } from 'node:crypto';
import { invalidInput, isErrorCode, QuarryError } from '../../shared/errors.ts';
import type {
  ErrorInfo,
  Session,
  SessionStatus,
  StepDamage,
  StepKind,
  StepRecord,
  StepStatus,
  StepUsage,
} from '../store.ts';
import type { SqlDialect, SqlDriver, SqlExecutor } from './sql-driver.ts';

/** JSON payloads longer than this many characters live in the blob table, referenced by hash. */
export const INLINE_PAYLOAD_LIMIT = 1024;

export function newId(): string {
  return randomUUID();
}

export function sha256(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `undefined` is stored as SQL NULL so it round-trips; everything else as JSON text. */
export function encodeJson(value: unknown): string | null {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  if (text === undefined) throw invalidInput('payload', 'must be JSON-serializable');
  return text;
}

export function decodeJson(text: unknown): unknown {
  if (text === null || text === undefined) return undefined;
  return JSON.parse(String(text));
}

export function decodeObject(text: unknown): Record<string, unknown> {
  const value = decodeJson(text);
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}

/** Stores bytes once by hash and records the session's reference to them. */
export async function putBlobInTx(
  tx: SqlExecutor,
  nowMs: string,
  sessionId: string,
  data: Uint8Array,
): Promise<string> {
  const [hash] = await putBlobsInTx(tx, nowMs, sessionId, [data]);
  return hash!;
}

/** One SQL statement and its parameters, to run alone or with others (`runWrites`). */
export interface Statement {
  sql: string;
  params: unknown[];
}

/**
 * The statements that store these blobs (each once, by hash) and reference them from the session:
 * two whatever the count (rows are taken in the VALUES order, so the hash order holds), none for no
 * items. The hashes are in the items' order.
 */
export function blobStatements(
  nowMs: string,
  sessionId: string,
  items: readonly Uint8Array[],
): { hashes: string[]; statements: Statement[] } {
  const hashes = items.map((data) => sha256(data));
  const unique = new Map(hashes.map((hash, index) => [hash, items[index]!]));
  const sorted = [...unique.keys()].sort();
  if (sorted.length === 0) return { hashes, statements: [] };
  return {
    hashes,
    statements: [
      {
        sql: `INSERT INTO blobs (hash, size, data, created_at) VALUES ${sorted.map(() => `(?, ?, ?, ${nowMs})`).join(', ')}
     ON CONFLICT (hash) DO NOTHING`,
        params: sorted.flatMap((hash) => {
          const data = unique.get(hash)!;
          return [hash, data.byteLength, Buffer.from(data.buffer, data.byteOffset, data.byteLength)];
        }),
      },
      {
        sql: `INSERT INTO blob_refs (session_id, hash) VALUES ${sorted.map(() => '(?, ?)').join(', ')}
     ON CONFLICT (session_id, hash) DO NOTHING`,
        params: sorted.flatMap((hash) => [sessionId, hash]),
      },
    ],
  };
}

/**
 * Stores several blobs at once and returns their hashes in the order given. Rows are inserted in
 * ascending hash order: two transactions storing the same new blobs (parallel LangGraph nodes
 * writing equal values) then wait for each other in one order and never deadlock.
 */
export async function putBlobsInTx(
  tx: SqlExecutor,
  nowMs: string,
  sessionId: string,
  items: readonly Uint8Array[],
): Promise<string[]> {
  const { hashes, statements } = blobStatements(nowMs, sessionId, items);
  for (const statement of statements) await tx.query(statement.sql, statement.params);
  return hashes;
}

/**
 * Runs writes that stand or fall together: where the database can, as one statement of
 * data-modifying CTEs (atomic by itself, one round trip instead of one per write plus BEGIN and
 * COMMIT), else as one transaction, in the order given. The writes must not read each other's rows;
 * foreign keys between them hold (PostgreSQL checks them at the end of the statement). Returns the
 * rows of the write at index `returning` (by default the last).
 */
export async function runWrites(
  driver: SqlDriver,
  statements: readonly Statement[],
  returning = statements.length - 1,
): Promise<Row[]> {
  if (statements.length === 0) return [];
  if (statements.length === 1) return driver.query(statements[0]!.sql, statements[0]!.params);
  if (!driver.dialect.writesInOneStatement) {
    return driver.transaction(async (tx) => {
      let rows: Row[] = [];
      for (const [index, statement] of statements.entries()) {
        const result = await tx.query(statement.sql, statement.params);
        if (index === returning) rows = result;
      }
      return rows;
    });
  }
  const main = statements[returning]!;
  const others = statements.filter((_, index) => index !== returning);
  return driver.query(
    `WITH ${others.map((statement, index) => `w${index} AS (${statement.sql})`).join(',\n')}\n${main.sql}`,
    [...others.flatMap((statement) => statement.params), ...main.params],
  );
}

/** Bytes to store once, by hash. */
export interface BlobToStore {
  hash: string;
  data: Buffer;
}

export function blobOf(data: Buffer): BlobToStore {
  return { hash: sha256(data), data };
}

/** A JSON payload either inline or, when long, as a blob to store. */
export function payloadOf(value: unknown): { inline: string | null; blob: BlobToStore | null } {
  const text = encodeJson(value);
  if (text === null || text.length <= INLINE_PAYLOAD_LIMIT) return { inline: text, blob: null };
  return { inline: null, blob: blobOf(Buffer.from(text, 'utf8')) };
}

/** A JSON payload stored in a transaction: inline, or as a blob reference. */
export async function storePayload(
  tx: SqlExecutor,
  nowMs: string,
  sessionId: string,
  value: unknown,
): Promise<{ inline: string | null; blob: string | null }> {
  const { inline, blob } = payloadOf(value);
  return { inline, blob: blob ? await putBlobInTx(tx, nowMs, sessionId, blob.data) : null };
}

/** A session's status as readers see it: `running` whose lease is over reads `interrupted`. */
export function effectiveStatusSql(dialect: SqlDialect): string {
  return `CASE WHEN status = 'running' AND ${dialect.leaseOver} THEN 'interrupted' ELSE status END`;
}

export function sessionColumns(dialect: SqlDialect): string {
  return `*, ${effectiveStatusSql(dialect)} AS effective_status, ${dialect.leaseExpiresAtMs} AS lease_expires_ms`;
}

type Row = Record<string, unknown>;

/** A stored error; a code this version does not know (an older release wrote it) reads as `INTERNAL`. */
function errorFrom(row: Row): ErrorInfo | null {
  if (!row.error_code) return null;
  return { code: isErrorCode(row.error_code) ? row.error_code : 'INTERNAL', message: String(row.error_message ?? '') };
}

export function toSession(row: Row): Session {
  const expiry = row.lease_expires_ms ?? row.lease_expires_at;
  const expiresAt = expiry === null || expiry === undefined ? null : Number(expiry);
  return {
    id: String(row.id),
    ownerId: String(row.owner_id),
    title: String(row.title),
    question: String(row.question),
    status: row.effective_status as SessionStatus,
    storedStatus: row.status as SessionStatus,
    settings: decodeObject(row.settings),
    workflow: { name: String(row.workflow_name), version: Number(row.workflow_version) },
    currentRunId: (row.current_run_id as string | null) ?? null,
    progress: {
      phase: (row.progress_phase as string | null) ?? null,
      completedSteps: Number(row.completed_steps),
      knownSteps: Number(row.known_steps),
      nextStep: (row.next_step as string | null) ?? null,
    },
    lease:
      row.lease_owner && expiresAt !== null
        ? {
            workerId: String(row.lease_owner),
            epoch: Number(row.lease_epoch),
            expiresAt,
            host: (row.lease_host as string | null) ?? null,
            pid: row.lease_pid === null || row.lease_pid === undefined ? null : Number(row.lease_pid),
          }
        : null,
    leaseEpoch: Number(row.lease_epoch),
    claimCount: Number(row.claim_count),
    stopRequested: Number(row.stop_requested) === 1,
    error: errorFrom(row),
    lastEventOffset: Number(row.last_event_offset),
    forkedFrom: (row.forked_from as string | null) ?? null,
    externalId: (row.external_id as string | null) ?? null,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * A stored JSON payload, inline or in a blob, or why it cannot be read back: damage in the store (a
 * payload that no longer parses, a blob reference whose blob is gone) is reported, never thrown, so
 * what is intact can still be shown and exported.
 */
function readPayload(inline: unknown, blobHash: unknown, blobData: unknown): { value: unknown; damage?: string } {
  try {
    if (inline !== null && inline !== undefined) return { value: decodeJson(inline) };
    if (!blobHash) return { value: undefined };
    if (blobData === null || blobData === undefined)
      return { value: undefined, damage: `its blob ${String(blobHash).slice(0, 12)}… is missing` };
    return { value: decodeJson(Buffer.from(blobData as Uint8Array).toString('utf8')) };
  } catch (error) {
    return { value: undefined, damage: `it does not parse as JSON (${(error as Error).message})` };
  }
}

/**
 * Step row → record; `input_data`/`output_data` are the joined blob bytes when the payload lives
 * there. A payload the store cannot give back is `undefined` and named in `damage`.
 */
export function toStepRecord(row: Row): StepRecord {
  const input = readPayload(row.input, row.input_blob, row.input_data);
  const output = readPayload(row.output, row.output_blob, row.output_data);
  const usage = readPayload(row.usage, null, null);
  const damage: StepDamage = {};
  if (input.damage) damage.input = input.damage;
  if (output.damage) damage.output = output.damage;
  if (usage.damage) damage.usage = usage.damage;
  return {
    runId: String(row.run_id),
    key: String(row.key),
    seq: Number(row.seq),
    phase: (row.phase as string | null) ?? null,
    kind: row.kind as StepKind,
    status: row.status as StepStatus,
    attempts: Number(row.attempts),
    input: input.value,
    output: output.value,
    error: errorFrom(row),
    usage: (usage.value as StepUsage | undefined) ?? null,
    startedAt: Number(row.started_at),
    endedAt: row.ended_at === null ? null : Number(row.ended_at),
    ...(Object.keys(damage).length > 0 ? { damage } : {}),
  };
}

/** Opaque keyset cursor over (updatedAt, id). */
export function encodeCursor(updatedAt: number, id: string): string {
  return Buffer.from(JSON.stringify([updatedAt, id])).toString('base64url');
}

export function decodeCursor(cursor: string): { updatedAt: number; id: string } {
  try {
    const [updatedAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    // A time the store holds (a whole, non-negative number of milliseconds) and an id: a forged
    // cursor is refused here, never handed to the database (PostgreSQL rejects 1e999 as a 500).
    if (Number.isSafeInteger(updatedAt) && (updatedAt as number) >= 0 && typeof id === 'string' && id.length <= 200)
      return { updatedAt: updatedAt as number, id };
  } catch {
    // fall through to the error below
  }
  throw invalidInput('cursor', 'not a cursor returned by a previous page');
}

export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

export function conflict(message: string, details: Record<string, unknown> = {}): QuarryError {
  return new QuarryError('CONFLICT', message, { details });
}

export function stepNotFound(runId: string, key: string): QuarryError {
  return new QuarryError('STEP_NOT_FOUND', `No step "${key}" in run "${runId}".`, { details: { runId, key } });
}

/** The value as the journal gives it back (JSON round trip), so a record built here equals a read one. */
export function asStored(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/**
 * The record of a step just begun, built from what its write returned (not read back: one round trip
 * fewer per step).
 */
export function begunStep(
  step: { runId: string; key: string; input?: unknown; phase: string | null; kind: StepKind },
  written: { seq: number | string; attempts: number | string; started_at: number | string },
): StepRecord {
  return {
    runId: step.runId,
    key: step.key,
    seq: Number(written.seq),
    phase: step.phase,
    kind: step.kind,
    status: 'running',
    attempts: Number(written.attempts),
    input: asStored(step.input),
    output: undefined,
    error: null,
    usage: null,
    startedAt: Number(written.started_at),
    endedAt: null,
  };
}
