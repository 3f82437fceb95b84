import { z } from 'zod';
import { type EventType, eventTypes } from '../shared/events.ts';
import { errorCodes, invalidInput, QuarryError } from './errors.ts';
import { sessionSnapshotSchema } from './snapshot-schema.ts';
import { finishedStatuses, messageRoles, type Store, sessionStatuses, stepKinds } from './store.ts';

/** Size limits enforced at the store's edge, whatever the caller. */
export const limits = {
  titleChars: 300,
  questionChars: 100_000,
  messageChars: 1_000_000,
  settingsBytes: 64 * 1024,
  /** One step's input or output, as JSON. */
  payloadBytes: 16 * 1024 * 1024,
  blobBytes: 32 * 1024 * 1024,
  listLimit: 500,
} as const;

function jsonSize(value: unknown): number {
  if (value === undefined) return 0;
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}

/** Any JSON-serializable value no larger than `maxBytes`. */
const payload = (maxBytes: number) =>
  z
    .unknown()
    .optional()
    .superRefine((value, ctx) => {
      let size: number;
      try {
        size = jsonSize(value);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON-serializable' });
        return;
      }
      if (size > maxBytes)
        ctx.addIssue({
          code: 'custom',
          message: `is ${size} bytes; the limit is ${maxBytes}`,
          params: { tooLarge: true },
        });
    });

const bigText = (max: number) =>
  z.string().superRefine((value, ctx) => {
    if (value.length > max)
      ctx.addIssue({ code: 'custom', message: `is longer than ${max} characters`, params: { tooLarge: true } });
  });

const id = z.string().min(1).max(128);
const nonEmpty = (max: number) => z.string().trim().min(1, 'must not be empty').max(max);
const settings = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  if (jsonSize(value) > limits.settingsBytes)
    ctx.addIssue({ code: 'custom', message: `exceed ${limits.settingsBytes} bytes`, params: { tooLarge: true } });
});
const status = z.enum(sessionStatuses);
const role = z.enum(messageRoles);
const ownerScope = z.object({ ownerId: id.optional() }).optional();
const fence = z.object({ sessionId: id, epoch: z.number().int().min(0) });
const lease = fence.extend({ workerId: nonEmpty(200), expiresAt: z.number() });
const stepKey = nonEmpty(500);
const phase = z.string().max(100).nullable().optional();
const event = z.object({ type: z.enum(eventTypes as [EventType, ...EventType[]]), data: payload(limits.payloadBytes) });
const events = z.array(event).max(100).optional();
const errorInfo = z.object({ code: z.enum(errorCodes), message: z.string().max(10_000) });
const usage = z
  .object({
    model: z.string().max(200).optional(),
    inputTokens: z.number().int().min(0).optional(),
    outputTokens: z.number().int().min(0).optional(),
    totalTokens: z.number().int().min(0).optional(),
    costUsd: z.number().min(0).optional(),
    latencyMs: z.number().min(0).optional(),
  })
  .optional();
const prompt = z
  .object({
    model: z.string().max(200).optional(),
    system: bigText(limits.messageChars).optional(),
    user: bigText(limits.payloadBytes),
  })
  .optional();
const ttlMs = z
  .number()
  .int()
  .min(1)
  .max(24 * 3600 * 1000);
const workflow = z.object({ name: nonEmpty(100), version: z.number().int().min(0) });
const message = z.object({ role, content: bigText(limits.messageChars) });
const beginStep = z.object({
  runId: id,
  key: stepKey,
  phase,
  kind: z.enum(stepKinds),
  input: payload(limits.payloadBytes),
  prompt,
  events,
});

/** Positional argument schemas per method; methods not listed take no checked arguments. */
const argumentSchemas: Partial<Record<keyof Store, z.ZodType[]>> = {
  createSession: [
    z.object({
      id: id.optional(),
      ownerId: id,
      title: nonEmpty(limits.titleChars),
      question: bigText(limits.questionChars).trim().min(1, 'must not be empty'),
      settings: settings.optional(),
      workflow,
      status: z.enum(['queued', 'interrupted']).optional(),
      message: message.optional(),
      run: z.object({ kind: nonEmpty(50), input: payload(limits.payloadBytes) }).optional(),
      externalId: nonEmpty(200).optional(),
    }),
  ],
  getSession: [id, ownerScope],
  findSessionByExternalId: [nonEmpty(200), z.object({ ownerId: id })],
  listForks: [id, ownerScope],
  listSessions: [
    z
      .object({
        ownerId: id.optional(),
        status: z.array(status).optional(),
        search: z.string().max(500).optional(),
        limit: z.number().int().min(1).max(limits.listLimit).optional(),
        cursor: z.string().max(1000).optional(),
      })
      .optional(),
  ],
  countSessions: [ownerScope],
  findSessionIds: [
    z.string().min(1).max(128),
    z.object({ ownerId: id.optional(), limit: z.number().int().min(1).max(100).optional() }).optional(),
  ],
  updateSession: [
    id,
    z.object({
      title: nonEmpty(limits.titleChars).optional(),
      settings: settings.optional(),
      status: status.optional(),
      error: errorInfo.nullable().optional(),
    }),
    ownerScope,
  ],
  deleteSession: [id, ownerScope],
  appendMessage: [
    z.object({
      sessionId: id,
      role,
      content: bigText(limits.messageChars),
      runId: id.nullable().optional(),
      phase,
      fence: fence.optional(),
    }),
  ],
  listMessages: [
    id,
    z.object({ runId: id.optional(), phase: z.string().max(100).optional(), ownerId: id.optional() }).optional(),
  ],
  startRun: [
    z.object({
      sessionId: id,
      kind: nonEmpty(50),
      input: payload(limits.payloadBytes),
      message: message.optional(),
      ownerId: id.optional(),
      status: z.enum(['queued', 'interrupted']).optional(),
    }),
  ],
  getRun: [id],
  listRuns: [id, ownerScope],
  beginStep: [fence, beginStep],
  completeStep: [fence, z.object({ runId: id, key: stepKey, output: payload(limits.payloadBytes), usage, events })],
  failStep: [fence, z.object({ runId: id, key: stepKey, error: errorInfo, events })],
  recordStep: [fence, beginStep.extend({ output: payload(limits.payloadBytes), usage })],
  supersedeSteps: [fence, z.object({ runId: id, fromSeq: z.number().int().min(1), events })],
  loadJournal: [id],
  listSteps: [id],
  getStep: [id, stepKey],
  putBlob: [
    id,
    z.instanceof(Uint8Array).refine((data) => data.byteLength <= limits.blobBytes, {
      message: `exceeds ${limits.blobBytes} bytes`,
      params: { tooLarge: true },
    }),
  ],
  getBlob: [z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha-256 hex digest')],
  upsertSource: [
    z.object({
      sessionId: id,
      url: nonEmpty(4000),
      title: z.string().max(1000).optional(),
      contentHash: z.string().max(128).nullable().optional(),
      considered: z.number().int().min(0).optional(),
      selected: z.number().int().min(0).optional(),
      citation: z.number().int().min(1).optional(),
      metadata: settings.optional(),
      runId: id.nullable().optional(),
      fence: fence.optional(),
    }),
  ],
  listSources: [id, ownerScope],
  appendEvent: [
    z.object({
      sessionId: id,
      fence: fence.optional(),
      event,
    }),
  ],
  readEvents: [
    id,
    z
      .object({
        after: z.number().int().min(0).optional(),
        limit: z.number().int().min(1).max(10_000).optional(),
        ownerId: id.optional(),
      })
      .optional(),
  ],
  claimSession: [
    z.object({
      sessionId: id,
      workerId: nonEmpty(200),
      ttlMs,
      fromStatuses: z.array(status).min(1).optional(),
      ownerId: id.optional(),
      host: nonEmpty(500).optional(),
      pid: z.number().int().min(0).optional(),
      takeOverEpoch: z.number().int().min(0).optional(),
    }),
  ],
  claimNext: [
    z.object({
      workerId: nonEmpty(200),
      ttlMs,
      maxClaims: z.number().int().min(1).optional(),
      host: nonEmpty(500).optional(),
      pid: z.number().int().min(0).optional(),
    }),
  ],
  heartbeat: [lease, ttlMs],
  release: [
    lease,
    z.object({
      status: z.enum(['completed', 'failed', 'interrupted', 'waiting', 'queued']),
      error: errorInfo.nullable().optional(),
      runOutput: payload(limits.payloadBytes),
      waitingFor: stepKey.optional(),
      events,
    }),
  ],
  requestStop: [id, ownerScope],
  deliverInput: [
    z.object({
      sessionId: id,
      runId: id,
      requestKey: stepKey,
      value: payload(limits.messageChars),
      ownerId: id.optional(),
    }),
  ],
  readInput: [id, stepKey],
  createUser: [
    z.object({
      id: id.optional(),
      name: nonEmpty(100).regex(/^[\w.@-]+$/, 'may contain letters, digits, "_", ".", "@" and "-"'),
    }),
  ],
  deleteUser: [id],
  addApiToken: [
    z.object({
      userId: id,
      tokenHash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha-256 hex digest'),
      label: z.string().max(200).optional(),
      expiresAt: z.number().int().min(0).nullable().optional(),
    }),
  ],
  listApiTokens: [id.optional()],
  deleteApiToken: [nonEmpty(64)],
  findUserByTokenHash: [z.string().max(128)],
  upsertDocument: [
    z.object({
      path: nonEmpty(4000),
      title: z.string().max(1000),
      kind: nonEmpty(20),
      size: z.number().int().min(0),
      mtimeMs: z.number().min(0),
      contentHash: z.string().regex(/^[0-9a-f]{64}$/),
      chars: z.number().int().min(0),
      navigation: z.boolean(),
      passages: z
        .array(
          z.object({
            start: z.number().int().min(0),
            end: z.number().int().min(0),
            text: bigText(limits.messageChars),
            headings: z.string().max(2000),
            linkDensity: z.number().min(0).max(1),
          }),
        )
        .max(200_000),
    }),
  ],
  touchDocument: [z.object({ path: nonEmpty(4000), mtimeMs: z.number().min(0), size: z.number().int().min(0) })],
  listDocuments: [z.object({ pathPrefix: z.string().max(4000).optional() }).optional()],
  removeDocuments: [z.array(z.string().max(4000)).max(1_000_000)],
  refreshCorpusStatistics: [],
  readPassages: [
    z.object({ documentId: z.number().int().min(0), positions: z.array(z.number().int().min(0)).max(100) }),
  ],
  searchPassages: [
    z.object({
      query: z.string().max(2000),
      limit: z.number().int().min(1).max(100).optional(),
      pathPrefixes: z.array(z.string().min(1).max(4000)).max(50).optional(),
    }),
  ],
  importSession: [sessionSnapshotSchema, z.object({ ownerId: id })],
  forkSession: [
    z.object({
      sessionId: id,
      beforeStep: stepKey.optional(),
      ownerId: id.optional(),
      newSessionId: id.optional(),
      title: nonEmpty(limits.titleChars).optional(),
      workflow: workflow.optional(),
    }),
  ],
  deleteFinishedSessions: [
    z.object({
      olderThanMs: z.number().int().min(0),
      statuses: z.array(z.enum(finishedStatuses)).min(1).optional(),
      ownerId: id.optional(),
      dryRun: z.boolean().optional(),
      batchSize: z.number().int().min(1).max(10_000).optional(),
      signal: z.instanceof(AbortSignal).optional(),
    }),
  ],
};

function toQuarryError(method: string, position: number, error: z.ZodError): QuarryError {
  const issue = error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.join('.') : `argument ${position + 1}`;
  const tooLarge = (issue as { params?: { tooLarge?: boolean } }).params?.tooLarge === true;
  return new QuarryError(
    tooLarge ? 'PAYLOAD_TOO_LARGE' : 'INVALID_INPUT',
    `Invalid ${field} for ${method}: ${issue.message}`,
    {
      details: { field, method },
    },
  );
}

/**
 * Wraps a store so every call's arguments are checked before the backend sees them: one place for
 * validation, shared by every backend. Parsed values (trimmed strings) replace the originals.
 */
export function validatingStore(store: Store): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      const schemas = argumentSchemas[property as keyof Store];
      if (typeof value !== 'function' || !schemas) return typeof value === 'function' ? value.bind(target) : value;
      return (...args: unknown[]) => {
        const parsed = [...args];
        for (const [position, schema] of schemas.entries()) {
          const result = schema.safeParse(args[position]);
          if (!result.success) return Promise.reject(toQuarryError(String(property), position, result.error));
          const nul = findNul(args[position], `argument ${position + 1}`);
          if (nul) return Promise.reject(invalidInput(nul, `must not contain NUL characters (in ${String(property)})`));
          // Keep the caller's object when the schema only checked it (signals, buffers, undefined payloads).
          if (typeof args[position] === 'string') parsed[position] = result.data;
          else if (isPlainObject(args[position]) && isPlainObject(result.data)) {
            parsed[position] = {
              ...(args[position] as object),
              ...pickStrings(result.data as Record<string, unknown>),
            };
          }
        }
        return (value as (...callArgs: unknown[]) => unknown).apply(target, parsed);
      };
    },
  });
}

/** Fields stored as JSON text (where a NUL is escaped, harmless); every other string goes to a text column. */
const jsonFields = new Set([
  'input',
  'output',
  'data',
  'value',
  'payload',
  'runOutput',
  'settings',
  'metadata',
  'usage',
]);

/**
 * The path of a string holding a NUL character, or null. PostgreSQL text cannot store one; refusing
 * it here makes both databases answer the same clear `INVALID_INPUT` instead of a driver error.
 */
function findNul(value: unknown, path: string, depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (depth > 4 || value === null || typeof value !== 'object' || value instanceof Uint8Array) return null;
  for (const [key, item] of Object.entries(value)) {
    if (jsonFields.has(key)) continue;
    const found = findNul(item, Array.isArray(value) ? `${path}[${key}]` : key, depth + 1);
    if (found) return found;
  }
  return null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/** Trimmed top-level strings from the parsed value, so checks and stored values agree. */
function pickStrings(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([, value]) => typeof value === 'string'));
}
