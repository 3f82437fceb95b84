import * as z from 'zod';
import { type ErrorCode, isErrorCode } from '../shared/errors.ts';
import { messageRoles, sessionStatuses, stepKinds } from './store-entities.ts';

const text = (min: number, max: number) => z.string().check(z.minLength(min), z.maxLength(max));
const count = (min: number) => z.int().check(z.gte(min));

const time = count(0);
const base64 = z.string().check(z.regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64'));

// Files written by older releases may carry codes this one no longer knows: they read as INTERNAL.
const errorInfo = z.object({
  code: z.pipe(
    text(1, 100),
    z.transform((code: string): ErrorCode => (isErrorCode(code) ? code : 'INTERNAL')),
  ),
  message: z.string().check(z.maxLength(10_000)),
});
const usage = z.nullable(
  z.object({
    model: z.optional(z.string()),
    inputTokens: z.optional(z.number()),
    outputTokens: z.optional(z.number()),
    totalTokens: z.optional(z.number()),
    costUsd: z.optional(z.number()),
    latencyMs: z.optional(z.number()),
  }),
);
/** The shape of `SessionSnapshot`, checked in full before an import writes anything. */
export const sessionSnapshotSchema = z
  .object({
    session: z.object({
      id: text(1, 128).check(z.regex(/^[A-Za-z0-9_-]+$/)),
      externalId: z.optional(z.nullable(text(1, 300))),
      title: z.string().check(z.trim(), z.minLength(1), z.maxLength(300)),
      question: text(1, 100_000),
      status: z.enum(sessionStatuses),
      settings: z.record(z.string(), z.unknown()),
      workflow: z.object({ name: text(1, 100), version: count(0) }),
      error: z.nullable(errorInfo),
      createdAt: time,
      updatedAt: time,
    }),
    messages: z
      .array(
        z.object({
          seq: count(1),
          role: z.enum(messageRoles),
          content: text(0, 1_000_000),
          runId: z.nullable(z.string()),
          phase: z.nullable(z.string()),
          createdAt: time,
        }),
      )
      .check(z.maxLength(100_000)),
    runs: z
      .array(
        z.object({
          id: text(1, 128),
          number: count(1),
          kind: text(1, 50),
          input: z.optional(z.unknown()),
          status: z.enum(['open', 'completed', 'failed']),
          output: z.optional(z.unknown()),
          createdAt: time,
          endedAt: z.nullable(time),
        }),
      )
      .check(z.maxLength(10_000)),
    steps: z
      .array(
        z.object({
          runId: z.string().check(z.minLength(1)),
          key: text(1, 500),
          seq: count(1),
          phase: z.nullable(text(0, 100)),
          kind: z.enum(stepKinds),
          status: z.enum(['running', 'completed', 'failed']),
          attempts: count(0),
          input: z.optional(z.unknown()),
          output: z.optional(z.unknown()),
          error: z.nullable(errorInfo),
          usage,
          prompt: z.nullable(z.object({ system: z.optional(z.string()), user: z.string() })),
          startedAt: time,
          endedAt: z.nullable(time),
          // Payloads the exporting store could not read back (damage on its disk).
          damage: z.optional(
            z.object({
              input: z.optional(text(0, 2000)),
              output: z.optional(text(0, 2000)),
              usage: z.optional(text(0, 2000)),
              prompt: z.optional(text(0, 2000)),
            }),
          ),
        }),
      )
      .check(z.maxLength(1_000_000)),
    sources: z
      .array(
        z.object({
          url: text(1, 4000),
          title: text(0, 1000),
          contentHash: z.nullable(z.string()),
          citation: z.nullable(count(1)),
          timesConsidered: count(0),
          timesSelected: count(0),
          metadata: z.record(z.string(), z.unknown()),
          runId: z.nullable(z.string()),
          createdAt: time,
        }),
      )
      .check(z.maxLength(100_000)),
    checkpoints: z.optional(
      z
        .array(
          z.object({
            ns: text(0, 500),
            id: text(1, 200),
            parentId: z.nullable(text(1, 200)),
            bodyType: text(1, 100),
            body: base64,
            metadata: text(0, 10_000_000),
            valueRefs: z.record(z.string(), z.string()),
            values: z.array(
              z.object({
                channel: text(1, 500),
                version: text(1, 200),
                valueType: text(1, 100),
                value: base64,
                baseVersion: z.nullable(text(1, 200)),
                baseOrigin: z.nullable(text(1, 200)),
              }),
            ),
            writes: z.array(
              z.object({
                taskId: text(1, 200),
                idx: z.int(),
                channel: text(1, 500),
                valueType: text(1, 100),
                value: base64,
                taskPath: text(0, 2000),
              }),
            ),
          }),
        )
        .check(z.maxLength(100_000)),
    ),
  })
  .check(
    z.superRefine((snapshot, ctx) => {
      // Checkpoints belong to a LangGraph thread: its graph finds them by the thread id.
      if (snapshot.checkpoints?.length && !snapshot.session.externalId?.startsWith('langgraph:'))
        ctx.addIssue({
          code: 'custom',
          path: ['checkpoints'],
          message: 'belong to a LangGraph thread, but session.externalId names none (langgraph:<thread id>)',
        });
      const runIds = new Set(snapshot.runs.map((run) => run.id));
      snapshot.steps.forEach((step, index) => {
        if (!runIds.has(step.runId))
          ctx.addIssue({
            code: 'custom',
            path: ['steps', index, 'runId'],
            message: 'refers to a run that is not in the file',
          });
      });
      const keys = new Set<string>();
      snapshot.steps.forEach((step, index) => {
        const key = `${step.runId}\u0000${step.key}`;
        if (keys.has(key))
          ctx.addIssue({ code: 'custom', path: ['steps', index, 'key'], message: 'appears twice in one run' });
        keys.add(key);
      });
    }),
  );
