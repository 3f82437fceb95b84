import { z } from 'zod';
import { type ErrorCode, isErrorCode } from './errors.ts';
import { messageRoles, sessionStatuses, stepKinds } from './store.ts';

const time = z.number().int().min(0);
// Files written by older releases may carry codes this one no longer knows: they read as INTERNAL.
const errorInfo = z.object({
  code: z
    .string()
    .min(1)
    .max(100)
    .transform((code): ErrorCode => (isErrorCode(code) ? code : 'INTERNAL')),
  message: z.string().max(10_000),
});
const usage = z
  .object({
    model: z.string().optional(),
    inputTokens: z.number().optional(),
    outputTokens: z.number().optional(),
    totalTokens: z.number().optional(),
    costUsd: z.number().optional(),
    latencyMs: z.number().optional(),
  })
  .nullable();

/** The shape of `SessionSnapshot`, checked in full before an import writes anything. */
export const sessionSnapshotSchema = z
  .object({
    session: z.object({
      id: z
        .string()
        .min(1)
        .max(128)
        .regex(/^[A-Za-z0-9_-]+$/),
      title: z.string().trim().min(1).max(300),
      question: z.string().min(1).max(100_000),
      status: z.enum(sessionStatuses),
      settings: z.record(z.string(), z.unknown()),
      workflow: z.object({ name: z.string().min(1).max(100), version: z.number().int().min(0) }),
      error: errorInfo.nullable(),
      createdAt: time,
      updatedAt: time,
    }),
    messages: z
      .array(
        z.object({
          seq: z.number().int().min(1),
          role: z.enum(messageRoles),
          content: z.string().max(1_000_000),
          runId: z.string().nullable(),
          phase: z.string().nullable(),
          createdAt: time,
        }),
      )
      .max(100_000),
    runs: z
      .array(
        z.object({
          id: z.string().min(1).max(128),
          number: z.number().int().min(1),
          kind: z.string().min(1).max(50),
          input: z.unknown().optional(),
          status: z.enum(['open', 'completed', 'failed']),
          output: z.unknown().optional(),
          createdAt: time,
          endedAt: time.nullable(),
        }),
      )
      .max(10_000),
    steps: z
      .array(
        z.object({
          runId: z.string().min(1),
          key: z.string().min(1).max(500),
          seq: z.number().int().min(1),
          phase: z.string().max(100).nullable(),
          kind: z.enum(stepKinds),
          status: z.enum(['running', 'completed', 'failed']),
          attempts: z.number().int().min(0),
          input: z.unknown().optional(),
          output: z.unknown().optional(),
          error: errorInfo.nullable(),
          usage,
          prompt: z.object({ system: z.string().optional(), user: z.string() }).nullable(),
          startedAt: time,
          endedAt: time.nullable(),
        }),
      )
      .max(1_000_000),
    sources: z
      .array(
        z.object({
          url: z.string().min(1).max(4000),
          title: z.string().max(1000),
          contentHash: z.string().nullable(),
          citation: z.number().int().min(1).nullable(),
          timesConsidered: z.number().int().min(0),
          timesSelected: z.number().int().min(0),
          metadata: z.record(z.string(), z.unknown()),
          runId: z.string().nullable(),
          createdAt: time,
        }),
      )
      .max(100_000),
  })
  .superRefine((snapshot, ctx) => {
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
  });
