import { z } from 'zod';
import { sessionStatuses } from '../store/store.ts';

/** Request schemas: they validate requests and generate the OpenAPI document. */
export const createSessionBody = z.object({
  question: z.string().trim().min(1).max(100_000),
  title: z.string().trim().min(1).max(300).optional(),
  settings: z.record(z.string(), z.unknown()).optional(),
  docs: z.array(z.string().min(1).max(4000)).max(20).optional(),
  search: z.array(z.string().min(1).max(50)).max(10).optional(),
  start: z.boolean().optional(),
});

export const renameBody = z.object({ title: z.string().trim().min(1).max(300) });
export const resumeBody = z.object({ from: z.string().min(1).max(500).optional(), force: z.boolean().optional() });
export const forkBody = z.object({ from: z.string().min(1).max(500).optional(), title: z.string().trim().min(1).max(300).optional(), run: z.boolean().optional() });
export const messageBody = z.object({ role: z.literal('user'), content: z.string().max(1_000_000) });

export const listQuery = z.object({
  status: z
    .string()
    .optional()
    .transform((value) => (value ? value.split(',') : undefined))
    .pipe(z.array(z.enum(sessionStatuses)).optional()),
  q: z.string().max(500).optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
  cursor: z.string().max(1000).optional(),
});

export const messagesQuery = z.object({ runId: z.string().max(128).optional(), phase: z.string().max(100).optional() });
export const stepsQuery = z.object({ phase: z.string().max(100).optional(), include: z.enum(['prompts']).optional() });
export const exportQuery = z.object({ format: z.enum(['md', 'html', 'json', 'legacy-json']).default('md') });
export const eventsQuery = z.object({ after: z.coerce.number().int().min(0).optional() });
export const sessionId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'is not a session id');

const contentPart = z.object({ type: z.string(), text: z.string().optional() });
export const chatCompletionBody = z.object({
  model: z.string().max(200).optional(),
  messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant', 'developer', 'tool']), content: z.union([z.string(), z.array(contentPart), z.null()]) })).min(1).max(500),
  stream: z.boolean().optional(),
  user: z.string().max(200).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  chat_id: z.string().max(200).optional(),
});
