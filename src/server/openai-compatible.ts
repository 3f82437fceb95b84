import { randomUUID } from 'node:crypto';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { type AnswerEnd, followAnswer, type RunUsage } from '../service/answer-stream.ts';
import { type ChatTurn, openChatTurn } from '../service/chat-conversation.ts';
import { answerChore, recognizeChore } from '../service/housekeeping.ts';
import { QuarryError } from '../shared/errors.ts';
import { reportDelivered } from './delivery-lag.ts';
import { chatDefaults, checkModel, MODEL, refuseUnsupported, textOfParts } from './openai-options.ts';
import { progressNote } from './responses-wire.ts';
import type { AppEnv, ServerDependencies } from './server-env.ts';
import { throwValidationError } from './validation-hook.ts';
import { errorResponses } from './wire.ts';

const CREATED = 1_700_000_000;

const contentPart = z.object({ type: z.string().max(50), text: z.string().optional() });
export const chatCompletionBody = z
  .object({
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
    stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    user: z.string().max(200).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    chat_id: z.string().min(1).max(200).optional(),
  })
  // Every other option is checked by name below: implemented, harmless at its default, or refused.
  .loose();

type ChatCompletionBody = z.infer<typeof chatCompletionBody>;

const modelObject = { id: MODEL, object: 'model' as const, created: CREATED, owned_by: 'quarry' };
const modelSchema = z.object({ id: z.string(), object: z.literal('model'), created: z.number(), owned_by: z.string() });

const models = createRoute({
  method: 'get',
  path: '/models',
  tags: ['openai'],
  summary: 'OpenAI-compatible model list (one model: quarry)',
  responses: {
    200: {
      description: 'Models',
      content: { 'application/json': { schema: z.object({ object: z.literal('list'), data: z.array(modelSchema) }) } },
    },
  },
});

const model = createRoute({
  method: 'get',
  path: '/models/{id}',
  tags: ['openai'],
  summary: 'One model of the list (404 for any other id)',
  request: { params: z.object({ id: z.string().max(200) }) },
  responses: {
    200: { description: 'The model', content: { 'application/json': { schema: modelSchema } } },
    404: errorResponses[404],
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

function textOf(content: ChatCompletionBody['messages'][number]['content'], field: string): string {
  if (typeof content === 'string') return content;
  return textOfParts(content ?? [], ['text', 'refusal'], field);
}

function usageOf(usage: RunUsage) {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** How an answer that did not come to an end is an error, in Quarry's terms (the status follows its code). */
function failure(end: Exclude<AnswerEnd, { outcome: 'answered' }>): QuarryError {
  if (end.outcome === 'failed') {
    const code = (
      ['STEP_FAILED', 'STEP_ATTEMPTS_EXCEEDED', 'CLAIM_LIMIT'].includes(end.code) ? end.code : 'STEP_FAILED'
    ) as 'STEP_FAILED';
    return new QuarryError(code, end.message, { details: { code: 'research_failed' } });
  }
  return new QuarryError('INTERRUPTED', end.message, {
    details: { code: end.outcome === 'stopped' ? 'research_stopped' : 'answer_rewritten' },
  });
}

/**
 * `POST /v1/chat/completions`, `GET /v1/models` and `GET /v1/models/{id}`: any chat client drives
 * research. The mapping of conversations to sessions lives in the service (`openChatTurn`); runs
 * never depend on the client staying connected. The answer streams as it is written; a run that
 * fails or is stopped is an error, never an answer; usage is the run's, from its journal.
 */
export function openAiRoutes(_dependencies: ServerDependencies) {
  return new OpenAPIHono<AppEnv>({ defaultHook: throwValidationError })
    .openapi(models, (c) => c.json({ object: 'list' as const, data: [modelObject] }, 200))
    .openapi(model, (c) => {
      const { id } = c.req.valid('param');
      if (id !== MODEL)
        throw new QuarryError('NOT_FOUND', `The model \`${id}\` does not exist.`, {
          details: { field: 'id', code: 'model_not_found' },
        });
      return c.json(modelObject, 200);
    })
    .openapi(completions, async (c) => {
      const body = c.req.valid('json');
      refuseUnsupported(body, Object.keys(chatCompletionBody.shape), chatDefaults);
      checkModel(body.model);
      const context = c.get('context');
      const metadataChatId = typeof body.metadata?.chat_id === 'string' ? body.metadata.chat_id : undefined;
      const messages: ChatTurn[] = body.messages.map((message, index) => ({
        role: message.role,
        text: textOf(message.content, `messages.${index}.content`),
      }));
      const id = `chatcmpl-${randomUUID()}`;
      const created = Math.floor(Date.now() / 1000);
      // A client's own task (a title, tags, follow-up suggestions) gets a short answer and starts nothing.
      const chore = recognizeChore(messages);
      if (chore) {
        const { text, usage } = await answerChore(context, chore, c.req.raw.signal);
        const base = { id, created, model: MODEL };
        if (!body.stream)
          return c.json(
            {
              ...base,
              object: 'chat.completion' as const,
              choices: [
                { index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop', logprobs: null },
              ],
              usage: usageOf(usage),
            },
            200,
          );
        return streamSSE(c, async (stream) => {
          const chunk = (delta: Record<string, unknown>, finish: string | null) =>
            stream.writeSSE({
              data: JSON.stringify({
                ...base,
                object: 'chat.completion.chunk',
                choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
              }),
            });
          await chunk({ role: 'assistant', content: text }, null);
          await chunk({}, 'stop');
          if (body.stream_options?.include_usage)
            await stream.writeSSE({
              data: JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage: usageOf(usage) }),
            });
          await stream.writeSSE({ data: '[DONE]' });
        });
      }
      const { session, after } = await openChatTurn(context, {
        messages,
        sessionId: c.req.header('x-quarry-session-id') || undefined,
        chatId: body.chat_id ?? metadataChatId,
        temperature: body.temperature ?? undefined,
      });
      c.header('x-quarry-session-id', session.id);
      if (!body.stream) {
        for await (const part of followAnswer(context, session, after, c.req.raw.signal)) {
          if (part.type !== 'end') continue;
          if (part.end.outcome !== 'answered') throw failure(part.end);
          return c.json(
            {
              id,
              object: 'chat.completion' as const,
              created,
              model: MODEL,
              choices: [
                {
                  index: 0,
                  message: { role: 'assistant', content: part.end.text },
                  finish_reason: 'stop',
                  logprobs: null,
                },
              ],
              usage: usageOf(part.usage),
            },
            200,
          );
        }
        throw new QuarryError('INTERRUPTED', 'The request ended before the research did; ask again for its answer.');
      }
      const includeUsage = body.stream_options?.include_usage === true;
      return streamSSE(c, async (stream) => {
        const controller = new AbortController();
        stream.onAbort(() => controller.abort());
        const send = (payload: unknown) => stream.writeSSE({ data: JSON.stringify(payload) });
        const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
          send({
            id,
            object: 'chat.completion.chunk',
            created,
            model: MODEL,
            choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
            ...(includeUsage ? { usage: null } : {}),
          });
        await chunk({ role: 'assistant', content: '' });
        for await (const part of followAnswer(context, session, after, controller.signal)) {
          if (part.type === 'progress') {
            const line = progressNote(part.event);
            if (line) await chunk({ reasoning_content: line });
            reportDelivered(part.event.createdAt);
          } else if (part.type === 'text') {
            await chunk({ content: part.text });
            reportDelivered(part.createdAt);
          } else if (part.end.outcome === 'answered') {
            await chunk({}, 'stop');
            if (includeUsage)
              await send({
                id,
                object: 'chat.completion.chunk',
                created,
                model: MODEL,
                choices: [],
                usage: usageOf(part.usage),
              });
            await stream.writeSSE({ data: '[DONE]' });
          } else {
            // As OpenAI reports an error mid-stream: an error object, which the SDKs raise.
            const error = failure(part.end);
            await send({
              error: {
                message: error.message,
                type: 'server_error',
                param: null,
                code: String(error.details.code),
              },
            });
          }
        }
      });
    });
}
