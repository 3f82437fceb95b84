/**
 * The journal's writes on a database that has its journal functions (PostgreSQL, migrations 6 and 9):
 * each write is one statement, one round trip, fenced inside the function. journal.ts chooses these
 * or its transactions by the dialect's `journalFunctions` flag.
 */
import { leaseLost, QuarryError, sessionNotFound } from '../errors.ts';
import type { BeginStepInput, CompleteStepInput, EventInput, Fence, RecordStepInput, StepRecord } from '../store.ts';
import {
  asStored,
  begunStep,
  conflict,
  decodeJson,
  encodeJson,
  INLINE_PAYLOAD_LIMIT,
  sha256,
  stepNotFound,
} from './codec.ts';
import type { SqlContext } from './context.ts';

type Row = Record<string, unknown>;

/** A payload for the journal functions: inline JSON, or a blob's hash and bytes when long. */
function functionPayload(value: unknown): [string | null, string | null, Buffer | null] {
  const text = encodeJson(value);
  if (text === null || text.length <= INLINE_PAYLOAD_LIMIT) return [text, null, null];
  const bytes = Buffer.from(text, 'utf8');
  return [null, sha256(bytes), bytes];
}

/** Events as the journal functions take them: their types and their data, as two arrays. */
function functionEvents(events: readonly EventInput[] | undefined): [string[], (string | null)[]] {
  return [(events ?? []).map((event) => event.type), (events ?? []).map((event) => encodeJson(event.data ?? null))];
}

/** The store's error for a journal function's own SQLSTATE (migration 6); anything else as it is. */
function journalFunctionError(error: unknown, fence: Fence, runId: string, key: string): unknown {
  switch ((error as { code?: string }).code) {
    case 'QL001':
      return leaseLost(fence.sessionId, fence.epoch);
    case 'QL002':
      return sessionNotFound(fence.sessionId);
    case 'QL003':
      return conflict(`Step "${key}" of run "${runId}" is already completed.`, { runId, key });
    case 'QL004':
      return new QuarryError('RUN_NOT_FOUND', `No run "${runId}" in session "${fence.sessionId}".`, {
        details: { runId },
      });
    case 'QL005':
      return stepNotFound(runId, key);
    default:
      return error;
  }
}

/** The arguments every journal function begins with: the fence, then the step's run and key. */
function stepArguments(fence: Fence, input: { runId: string; key: string }): unknown[] {
  return [fence.sessionId, fence.epoch, input.runId, input.key];
}

/** A step as it begins: its phase, kind and input. */
function beginArguments(input: Omit<BeginStepInput, 'runId' | 'key'>): unknown[] {
  return [input.phase ?? null, input.kind, ...functionPayload(input.input)];
}

/** `beginStep` as one statement (one round trip): the fence, the step, its blobs and events. */
export async function beginStepInOneStatement(
  ctx: SqlContext,
  fence: Fence,
  input: BeginStepInput,
): Promise<StepRecord> {
  const prompt = input.prompt ? Buffer.from(encodeJson(input.prompt)!, 'utf8') : null;
  const rows = await ctx.driver
    .query<{ seq: number; attempts: number; started_at: number; phase: string | null; kind: string }>(
      'SELECT * FROM quarry_begin_step(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        ...stepArguments(fence, input),
        ...beginArguments(input),
        prompt ? sha256(prompt) : null,
        prompt,
        ...functionEvents(input.events),
      ],
    )
    .catch((error: unknown) => {
      throw journalFunctionError(error, fence, input.runId, input.key);
    });
  const written = rows[0]!;
  return begunStep({ ...input, phase: written.phase, kind: written.kind as StepRecord['kind'] }, written);
}

/** `completeStep` as one statement (one round trip): the fence, the output, its blob and events. */
export function completeStepInOneStatement(
  ctx: SqlContext,
  fence: Fence,
  input: CompleteStepInput,
): Promise<StepRecord> {
  return completingStatement(ctx, fence, input, 'SELECT * FROM quarry_complete_step(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
    ...stepArguments(fence, input),
    ...functionPayload(input.output),
    input.usage ? encodeJson(input.usage) : null,
    ...functionEvents(input.events),
  ]);
}

/** `recordStep` as one statement (migration 9): the begin and the complete above, in turn. */
export function recordStepInOneStatement(ctx: SqlContext, fence: Fence, input: RecordStepInput): Promise<StepRecord> {
  return completingStatement(
    ctx,
    fence,
    input,
    'SELECT * FROM quarry_record_step(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [
      ...stepArguments(fence, input),
      ...beginArguments(input),
      ...functionPayload(input.output),
      input.usage ? encodeJson(input.usage) : null,
      ...functionEvents(input.events),
    ],
  );
}

/** Runs a journal function that completes a step, and the completed step from its row. */
async function completingStatement(
  ctx: SqlContext,
  fence: Fence,
  input: CompleteStepInput,
  sql: string,
  params: unknown[],
): Promise<StepRecord> {
  const rows = await ctx.driver.query<Row>(sql, params).catch((error: unknown) => {
    throw journalFunctionError(error, fence, input.runId, input.key);
  });
  const row = rows[0]!;
  const storedInput = row.input_data ? Buffer.from(row.input_data as Uint8Array).toString('utf8') : row.input;
  return {
    runId: input.runId,
    key: input.key,
    seq: Number(row.seq),
    phase: (row.phase as string | null) ?? null,
    kind: row.kind as StepRecord['kind'],
    status: 'completed',
    attempts: Number(row.attempts),
    input: decodeJson(storedInput),
    output: asStored(input.output),
    error: null,
    usage: input.usage ? (asStored(input.usage) as StepRecord['usage']) : null,
    startedAt: Number(row.started_at),
    endedAt: Number(row.ended_at),
  };
}
