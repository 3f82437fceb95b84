import * as z from 'zod';
import { nullable, optional } from 'zod';
import { errorCodes } from '../shared/errors.ts';
import { type EventType, eventTypes } from '../shared/events.ts';
import { messageRoles, sessionStatuses, stepKinds } from './store-entities.ts';

/** The schema parts the store's argument schemas are made of (`validating-store.ts`). */

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

export function jsonSize(value: unknown): number {
  if (value === undefined) return 0;
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}

/** Any JSON-serializable value no larger than `maxBytes`. */
export const payload = (maxBytes: number) =>
  z.optional(
    z.unknown().check(
      z.superRefine((value, ctx) => {
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
      }),
    ),
  );

export const bigText = (max: number) =>
  z.string().check(
    z.superRefine((value, ctx) => {
      if (value.length > max)
        ctx.addIssue({ code: 'custom', message: `is longer than ${max} characters`, params: { tooLarge: true } });
    }),
  );

export const maybe = <T extends z.ZodType>(schema: T) => optional(nullable(schema));
export const text = (max: number) => z.string().check(z.maxLength(max));
export const int = (min: number, max?: number) =>
  max === undefined ? z.int().check(z.gte(min)) : z.int().check(z.gte(min), z.lte(max));
export const number = (min: number, max?: number) =>
  max === undefined ? z.number().check(z.gte(min)) : z.number().check(z.gte(min), z.lte(max));
export const list = <T extends z.ZodType>(item: T, max: number) => z.array(item).check(z.maxLength(max));
export const someOf = <T extends z.ZodType>(item: T) => z.array(item).check(z.minLength(1));
/** A W3C trace context header: version, trace id, parent span id, flags. */
export const traceparent = () =>
  z.string().check(z.regex(/^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/, 'must be a W3C traceparent'));
export const sha256Hex = (message?: string) => z.string().check(z.regex(/^[0-9a-f]{64}$/, message));
export const id = () => z.string().check(z.minLength(1), z.maxLength(128));
export const nonEmpty = (max: number) =>
  z.string().check(z.trim(), z.minLength(1, 'must not be empty'), z.maxLength(max));

// The pieces the store's operations share, as functions: each use gets a schema of its own.
export const settings = () =>
  z.record(z.string(), z.unknown()).check(
    z.superRefine((value, ctx) => {
      if (jsonSize(value) > limits.settingsBytes)
        ctx.addIssue({ code: 'custom', message: `exceed ${limits.settingsBytes} bytes`, params: { tooLarge: true } });
    }),
  );
export const status = () => z.enum(sessionStatuses);
export const role = () => z.enum(messageRoles);
export const ownerScope = () => optional(z.object({ ownerId: optional(id()) }));
export const fence = () => z.object({ sessionId: id(), epoch: int(0) });
export const lease = () => fence().extend({ workerId: nonEmpty(200), expiresAt: z.number() });
export const stepKey = () => nonEmpty(500);
export const phase = () => maybe(text(100));
export const event = () =>
  z.object({ type: z.enum(eventTypes as [EventType, ...EventType[]]), data: payload(limits.payloadBytes) });
export const events = () => optional(list(event(), 100));
export const errorInfo = () => z.object({ code: z.enum(errorCodes), message: text(10_000) });
export const usage = () =>
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
export const prompt = () =>
  optional(
    z.object({
      model: optional(text(200)),
      system: optional(bigText(limits.messageChars)),
      user: bigText(limits.payloadBytes),
    }),
  );
export const ttlMs = () => int(1, 24 * 3600 * 1000);
export const admission = () => optional(z.object({ sessions: optional(int(0)), activeRuns: optional(int(0)) }));
export const workflow = () => z.object({ name: nonEmpty(100), version: int(0) });
export const message = () => z.object({ role: role(), content: bigText(limits.messageChars) });
export const beginStep = () =>
  z.object({
    runId: id(),
    key: stepKey(),
    phase: phase(),
    kind: z.enum(stepKinds),
    input: payload(limits.payloadBytes),
    prompt: prompt(),
    events: events(),
  });
