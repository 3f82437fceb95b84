import * as z from 'zod';
import { optional } from 'zod';
import { errorCodes, invalidInput, QuarryError } from '../shared/errors.ts';
import { type EventType, eventTypes } from '../shared/events.ts';
import { accountSchemas } from './accounts-contract.ts';
import { corpusSchemas } from './corpus-contract.ts';
import { findNul } from './find-nul.ts';
import {
  bigText,
  id,
  int,
  jsonSize,
  limits,
  list,
  maybe,
  nonEmpty,
  number,
  payload,
  sha256Hex,
  someOf,
  text,
  traceparent,
} from './schema-parts.ts';
import { asNarrowAs, type CheckedTable, type OperationOf, type SchemaTable } from './schema-table.ts';
import { sessionSnapshotSchema } from './snapshot-schema.ts';
import {
  finishedStatuses,
  messageRoles,
  type SessionSnapshot,
  type Store,
  sessionStatuses,
  stepKinds,
} from './store.ts';

// The pieces methods share are functions: each use gets a schema of its own.
const settings = () =>
  z.record(z.string(), z.unknown()).check(
    z.superRefine((value, ctx) => {
      if (jsonSize(value) > limits.settingsBytes)
        ctx.addIssue({ code: 'custom', message: `exceed ${limits.settingsBytes} bytes`, params: { tooLarge: true } });
    }),
  );
const status = () => z.enum(sessionStatuses);
const role = () => z.enum(messageRoles);
const ownerScope = () => optional(z.object({ ownerId: optional(id()) }));
const fence = () => z.object({ sessionId: id(), epoch: int(0) });
const lease = () => fence().extend({ workerId: nonEmpty(200), expiresAt: z.number() });
const stepKey = () => nonEmpty(500);
const phase = () => maybe(text(100));
const event = () =>
  z.object({ type: z.enum(eventTypes as [EventType, ...EventType[]]), data: payload(limits.payloadBytes) });
const events = () => optional(list(event(), 100));
const errorInfo = () => z.object({ code: z.enum(errorCodes), message: text(10_000) });
const usage = () =>
  optional(
    z.object({
      model: optional(text(200)),
      inputTokens: optional(int(0)),
      outputTokens: optional(int(0)),
      totalTokens: optional(int(0)),
      costUsd: optional(number(0)),
      latencyMs: optional(number(0)),
    }),
  );
const prompt = () =>
  optional(
    z.object({
      model: optional(text(200)),
      system: optional(bigText(limits.messageChars)),
      user: bigText(limits.payloadBytes),
    }),
  );
const ttlMs = () => int(1, 24 * 3600 * 1000);
const admission = () => optional(z.object({ sessions: optional(int(0)), activeRuns: optional(int(0)) }));
const workflow = () => z.object({ name: nonEmpty(100), version: int(0) });
const message = () => z.object({ role: role(), content: bigText(limits.messageChars) });
const beginStep = () =>
  z.object({
    runId: id(),
    key: stepKey(),
    phase: phase(),
    kind: z.enum(stepKinds),
    input: payload(limits.payloadBytes),
    prompt: prompt(),
    events: events(),
  });

/**
 * Positional argument schemas of every operation (`null`: an operation with no arguments to check);
 * the corpus's and the accounts' stand beside their contracts.
 */
const argumentSchemas = {
  ...corpusSchemas,
  ...accountSchemas,
  createSession: [
    z.object({
      id: optional(id()),
      ownerId: id(),
      title: nonEmpty(limits.titleChars),
      question: bigText(limits.questionChars).check(z.trim(), z.minLength(1, 'must not be empty')),
      settings: optional(settings()),
      workflow: workflow(),
      status: optional(z.enum(['queued', 'interrupted'])),
      message: optional(message()),
      run: optional(
        z.object({ kind: nonEmpty(50), input: payload(limits.payloadBytes), traceContext: maybe(traceparent()) }),
      ),
      externalId: optional(nonEmpty(200)),
      admission: admission(),
    }),
  ],
  getSession: [id(), ownerScope()],
  findSessionByExternalId: [nonEmpty(200), z.object({ ownerId: id() })],
  listForks: [id(), ownerScope()],
  setShareLink: [id(), maybe(sha256Hex('must be a sha-256 hex digest')), ownerScope()],
  shareLinkOf: [id(), ownerScope()],
  findSharedSession: [text(128)],
  listSessions: [
    optional(
      z.object({
        ownerId: optional(id()),
        status: optional(z.array(status())),
        search: optional(text(500)),
        limit: optional(int(1, limits.listLimit)),
        cursor: optional(text(1000)),
      }),
    ),
  ],
  countSessions: [ownerScope()],
  countSessionsByStatus: [],
  findSessionIds: [id(), optional(z.object({ ownerId: optional(id()), limit: optional(int(1, 100)) }))],
  updateSession: [
    id(),
    z.object({
      title: optional(nonEmpty(limits.titleChars)),
      settings: optional(settings()),
      status: optional(status()),
      error: maybe(errorInfo()),
      fence: optional(fence()),
    }),
    ownerScope(),
  ],
  deleteSession: [id(), ownerScope()],
  appendMessage: [
    z.object({
      sessionId: id(),
      role: role(),
      content: bigText(limits.messageChars),
      runId: maybe(id()),
      phase: phase(),
      fence: optional(fence()),
    }),
  ],
  listMessages: [
    id(),
    optional(z.object({ runId: optional(id()), phase: optional(text(100)), ownerId: optional(id()) })),
  ],
  startRun: [
    z.object({
      sessionId: id(),
      kind: nonEmpty(50),
      input: payload(limits.payloadBytes),
      message: optional(message()),
      ownerId: optional(id()),
      status: optional(z.enum(['queued', 'interrupted'])),
      admission: admission(),
      traceContext: maybe(traceparent()),
      settings: optional(settings()),
    }),
  ],
  getRun: [id()],
  listRuns: [id(), ownerScope()],
  beginStep: [fence(), beginStep()],
  completeStep: [
    fence(),
    z.object({ runId: id(), key: stepKey(), output: payload(limits.payloadBytes), usage: usage(), events: events() }),
  ],
  failStep: [fence(), z.object({ runId: id(), key: stepKey(), error: errorInfo(), events: events() })],
  recordStep: [fence(), beginStep().extend({ output: payload(limits.payloadBytes), usage: usage() })],
  supersedeSteps: [fence(), z.object({ runId: id(), fromSeq: int(1), events: events() })],
  loadJournal: [id()],
  listSteps: [id()],
  listStepUsage: [id()],
  getStep: [id(), stepKey()],
  putBlob: [
    id(),
    // (`instanceof` types its value as a Uint8Array over an ArrayBuffer; any Uint8Array is taken.)
    asNarrowAs<Uint8Array>()(
      z.instanceof(Uint8Array).check(
        z.refine((data) => data.byteLength <= limits.blobBytes, {
          message: `exceeds ${limits.blobBytes} bytes`,
          params: { tooLarge: true },
        }),
      ),
    ),
  ],
  getBlob: [sha256Hex('must be a sha-256 hex digest')],
  upsertSource: [
    z.object({
      sessionId: id(),
      url: nonEmpty(4000),
      title: optional(text(1000)),
      contentHash: maybe(text(128)),
      considered: optional(int(0)),
      selected: optional(int(0)),
      citation: optional(int(1)),
      metadata: optional(settings()),
      runId: maybe(id()),
      fence: optional(fence()),
    }),
  ],
  listSources: [id(), ownerScope()],
  listCheckpointSnapshots: [id(), ownerScope()],
  appendEvent: [z.object({ sessionId: id(), fence: optional(fence()), event: event() })],
  readEvents: [
    id(),
    optional(z.object({ after: optional(int(0)), limit: optional(int(1, 10_000)), ownerId: optional(id()) })),
  ],
  claimSession: [
    z.object({
      sessionId: id(),
      workerId: nonEmpty(200),
      ttlMs: ttlMs(),
      fromStatuses: optional(someOf(status())),
      ownerId: optional(id()),
      host: optional(nonEmpty(500)),
      pid: optional(int(0)),
      takeOverEpoch: optional(int(0)),
      admission: admission(),
    }),
  ],
  claimNext: [
    z.object({
      workerId: nonEmpty(200),
      ttlMs: ttlMs(),
      maxClaims: optional(int(1)),
      host: optional(nonEmpty(500)),
      pid: optional(int(0)),
    }),
  ],
  heartbeat: [lease(), ttlMs()],
  release: [
    lease(),
    z.object({
      status: z.enum(['completed', 'failed', 'interrupted', 'waiting', 'queued']),
      error: maybe(errorInfo()),
      runOutput: payload(limits.payloadBytes),
      waitingFor: optional(stepKey()),
      events: events(),
    }),
  ],
  requestStop: [id(), optional(z.object({ ownerId: optional(id()), reason: optional(text(200)) }))],
  deliverInput: [
    z.object({
      sessionId: id(),
      runId: id(),
      requestKey: stepKey(),
      value: payload(limits.messageChars),
      ownerId: optional(id()),
    }),
  ],
  readInput: [id(), stepKey()],
  // An export never holds superseded steps (they are left out when it is written): narrower on purpose.
  importSession: [
    asNarrowAs<SessionSnapshot>()(sessionSnapshotSchema),
    z.object({ ownerId: id(), admission: admission() }),
  ],
  forkSession: [
    z.object({
      sessionId: id(),
      beforeStep: optional(stepKey()),
      throughRun: optional(int(1)),
      ownerId: optional(id()),
      newSessionId: optional(id()),
      title: optional(nonEmpty(limits.titleChars)),
      workflow: optional(workflow()),
      admission: admission(),
    }),
  ],
  deleteFinishedSessions: [
    z.object({
      olderThanMs: int(0),
      statuses: optional(someOf(z.enum(finishedStatuses))),
      ownerId: optional(id()),
      dryRun: optional(z.boolean()),
      batchSize: optional(int(1, 10_000)),
      signal: optional(z.instanceof(AbortSignal)),
    }),
  ],
  // Nothing a caller sends to check: the store's own description, its end, and its listeners.
  info: null,
  close: null,
  subscribe: null,
  onRunnable: null,
} as const satisfies SchemaTable<Store>;

/**
 * Every operation's schemas checked against its signature: an operation without an entry, or with
 * schemas that do not fit its signature, does not compile (see `Checked`).
 */
const checkedAgainstStore: CheckedTable<Store, typeof argumentSchemas> = argumentSchemas;
void checkedAgainstStore;

function schemasOf(method: PropertyKey): readonly z.ZodType[] | undefined {
  if (typeof method !== 'string' || !Object.hasOwn(argumentSchemas, method)) return undefined;
  return argumentSchemas[method as OperationOf<Store>] ?? undefined;
}

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
      const schemas = schemasOf(property);
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/** Trimmed top-level strings from the parsed value, so checks and stored values agree. */
function pickStrings(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([, value]) => typeof value === 'string'));
}
