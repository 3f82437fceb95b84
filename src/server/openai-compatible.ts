import { randomUUID } from 'node:crypto';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { type ChatTurn, chatReply, openChatTurn } from '../service/chat-conversation.ts';
import { followEvents } from '../service/follow-events.ts';
import type { ServiceContext } from '../service/service-context.ts';
import { isRunEnd } from '../shared/events.ts';
import type { Session } from '../store/store.ts';
import { progressNote } from './responses-wire.ts';
import type { AppEnv, ServerDependencies } from './server-env.ts';
import { throwValidationError } from './validation-hook.ts';
import { errorResponses } from './wire.ts';

const MODEL = 'quarry';

const contentPart = z.object({ type: z.string().max(50), text: z.string().optional() });
export const chatCompletionBody = z.object({
  model: z.string().max(200).optional(),
  messages: z
    .array(
      z.object({
        role: z.enum(['system', 'user', 'assistant', 'developer', 'tool']),
        content: z.union([z.string(), z.array(contentPart).max(100), z.null()]),
      }),
    )
    .min(1)
    .max(500),
  stream: z.boolean().optional(),
  user: z.string().max(200).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  chat_id: z.string().min(1).max(200).optional(),
});

const models = createRoute({
  method: 'get',
  path: '/models',
  tags: ['openai'],
  summary: 'OpenAI-compatible model list (one model: quarry)',
  responses: {
    200: {
      description: 'Models',
      content: {
        'application/json': {
          schema: z.object({
            object: z.literal('list'),
            data: z.array(
              z.object({ id: z.string(), object: z.literal('model'), created: z.number(), owned_by: z.string() }),
            ),
          }),
        },
      },
    },
  },
});

const completions = createRoute({
  method: 'post',
  path: '/chat/completions',
  tags: ['openai'],
  summary:
    'OpenAI-compatible chat: a conversation drives a research session (X-Quarry-Session-Id or chat_id pick it; else the history must continue a session’s stored conversation)',
  request: { body: { required: true, content: { 'application/json': { schema: chatCompletionBody } } } },
  responses: {
    200: { description: 'A completion, or an SSE stream of chunks' },
    400: errorResponses[400],
    404: errorResponses[404],
    409: errorResponses[409],
  },
});

function textOf(content: z.infer<typeof chatCompletionBody>['messages'][number]['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => part.text ?? '').join('');
}

/** The assistant's reply: follows the run to its end (reporting progress), then says what it came to. */
async function answer(
  context: ServiceContext,
  session: Session,
  after: number | null,
  options: { onProgress?: (line: string) => Promise<void>; signal?: AbortSignal } = {},
): Promise<string> {
  if (after === null) return chatReply(context, session, null);
  for await (const event of followEvents(context.store, session.id, { after, signal: options.signal })) {
    const line = progressNote(event);
    if (line && options.onProgress) await options.onProgress(line);
    if (isRunEnd(event)) return chatReply(context, session, event);
  }
  return '';
}

/**
 * `POST /v1/chat/completions` and `GET /v1/models`: any chat client drives research. The mapping
 * of conversations to sessions lives in the service (`openChatTurn`); runs never depend on the
 * client staying connected.
 */
export function openAiRoutes(_dependencies: ServerDependencies) {
  return new OpenAPIHono<AppEnv>({ defaultHook: throwValidationError })
    .openapi(models, (c) =>
      c.json(
        {
          object: 'list' as const,
          data: [{ id: MODEL, object: 'model' as const, created: 1_700_000_000, owned_by: 'quarry' }],
        },
        200,
      ),
    )
    .openapi(completions, async (c) => {
      const body = c.req.valid('json');
      const context = c.get('context');
      const metadataChatId = typeof body.metadata?.chat_id === 'string' ? body.metadata.chat_id : undefined;
      const messages: ChatTurn[] = body.messages.map((message) => ({
        role: message.role,
        text: textOf(message.content),
      }));
      const { session, after } = await openChatTurn(context, {
        messages,
        sessionId: c.req.header('x-quarry-session-id') || undefined,
        chatId: body.chat_id ?? metadataChatId,
      });
      const id = `chatcmpl-${randomUUID()}`;
      const created = Math.floor(Date.now() / 1000);
      c.header('x-quarry-session-id', session.id);
      if (!body.stream) {
        const content = await answer(context, session, after, { signal: c.req.raw.signal });
        return c.json(
          {
            id,
            object: 'chat.completion',
            created,
            model: MODEL,
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
          },
          200,
        );
      }
      return streamSSE(c, async (stream) => {
        const controller = new AbortController();
        stream.onAbort(() => controller.abort());
        const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
          stream.writeSSE({
            data: JSON.stringify({
              id,
              object: 'chat.completion.chunk',
              created,
              model: MODEL,
              choices: [{ index: 0, delta, finish_reason: finish }],
            }),
          });
        await chunk({ role: 'assistant', content: '' });
        const content = await answer(context, session, after, {
          onProgress: (line) => chunk({ reasoning_content: line }),
          signal: controller.signal,
        });
        for (const piece of content.match(/[\s\S]{1,400}/g) ?? []) await chunk({ content: piece });
        await chunk({}, 'stop');
        await stream.writeSSE({ data: '[DONE]' });
      });
    });
}
