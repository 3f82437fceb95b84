import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { eventsWithin } from '../service/answer-stream.ts';
import type { ChatTurn } from '../service/chat-conversation.ts';
import { answerChore, recognizeChore } from '../service/housekeeping.ts';
import { OutageWatch, outageStopReason } from '../service/outage-watch.ts';
import {
  cancelResponse,
  createResponse,
  deleteResponse,
  endsTurn,
  parseResponseId,
  type ResponseHandle,
  responseId,
  responseState,
  turnEvents,
} from '../service/responses.ts';
import type { ServiceContext } from '../service/service-context.ts';
import { stopSession } from '../service/session-control.ts';
import { invalidInput, QuarryError } from '../shared/errors.ts';
import { choreResponseObject, choreStreamOpening, choreStreamRest } from './chore-response.ts';
import { reportDelivered } from './delivery-lag.ts';
import { checkModel, refuseUnsupported, responsesDefaults, textOfParts } from './openai-options.ts';
import { ResponseEventWriter, responseObject } from './responses-wire.ts';
import { liveStream } from './routes/live-routes.ts';
import type { AppEnv, ServerDependencies } from './server-env.ts';
import { throwValidationError } from './validation-hook.ts';
import { errorResponses, noNul } from './wire.ts';

const tags = ['openai'];
const text = (max: number) => noNul(z.string().max(max));
const contentPart = z.object({ type: z.string().max(50), text: text(100_000).optional() });
const inputMessage = z.object({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([text(100_000), z.array(contentPart).max(100)]),
});
/** Any other input item (a function call's output, a reasoning item…): refused by name below. */
const otherItem = z.object({ type: z.string().max(100) }).loose();

export const responseCreateBody = z
  .object({
    model: z.string().max(200).nullish(),
    input: z.union([
      text(100_000).min(1),
      z
        .array(z.union([inputMessage, otherItem]))
        .min(1)
        .max(500),
    ]),
    instructions: text(4000).nullish(),
    previous_response_id: text(200).nullish(),
    background: z.boolean().nullish(),
    stream: z.boolean().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    // Kept with the run (later reads return it): OpenAI's limits, 16 pairs of ≤ 64-character keys.
    metadata: z
      .record(text(64), text(512))
      .refine((value) => Object.keys(value).length <= 16, 'at most 16 pairs')
      .nullish(),
  })
  // Every other option is checked by name: implemented, harmless at its default, or refused.
  .loose();

const idParams = z.object({ id: text(200).openapi({ param: { name: 'id', in: 'path' } }) });
const retrieveQuery = z.object({
  stream: z.enum(['true', 'false']).optional(),
  starting_after: z.coerce.number().int().min(-1).max(Number.MAX_SAFE_INTEGER).optional(),
});
const inputItemsQuery = z.object({
  order: z.enum(['asc', 'desc']).default('desc'),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: text(200).optional(),
  before: text(200).optional(),
});

const stream = { 'text/event-stream': { schema: z.string() } };
const responseJson = { 'application/json': { schema: z.object({ id: z.string(), status: z.string() }).passthrough() } };
const routes = {
  create: createRoute({
    method: 'post',
    path: '/responses',
    tags,
    summary:
      'Responses API: start a research (or, with previous_response_id, the next turn of its session); background, stream, or wait',
    request: { body: { required: true, content: { 'application/json': { schema: responseCreateBody } } } },
    responses: {
      200: {
        description: 'The response, or an SSE stream of response events',
        content: { ...responseJson, ...stream },
      },
      400: errorResponses[400],
      404: errorResponses[404],
      409: errorResponses[409],
    },
  }),
  retrieve: createRoute({
    method: 'get',
    path: '/responses/{id}',
    tags,
    summary: 'A response as it stands; with stream=true its events, from starting_after on',
    request: { params: idParams, query: retrieveQuery },
    responses: {
      200: { description: 'The response, or an SSE stream', content: { ...responseJson, ...stream } },
      404: errorResponses[404],
    },
  }),
  cancel: createRoute({
    method: 'post',
    path: '/responses/{id}/cancel',
    tags,
    summary: 'Cancel a queued or running response (its session stops and can be resumed later)',
    request: { params: idParams },
    responses: { 200: { description: 'The response', content: responseJson }, 404: errorResponses[404] },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/responses/{id}',
    tags,
    summary: 'Delete a response: the session it is a turn of, with all its turns',
    request: { params: idParams },
    responses: {
      200: {
        description: 'Deleted',
        content: {
          'application/json': {
            schema: z.object({ id: z.string(), object: z.literal('response'), deleted: z.literal(true) }),
          },
        },
      },
      404: errorResponses[404],
      409: errorResponses[409],
    },
  }),
  inputItems: createRoute({
    method: 'get',
    path: '/responses/{id}/input_items',
    tags,
    summary: 'The user messages a response was given',
    request: { params: idParams, query: inputItemsQuery },
    responses: { 200: { description: 'A list of input items' }, 404: errorResponses[404] },
  }),
};

/**
 * The conversation an input gives: messages, with the text of `input_text` parts (and of the
 * `output_text` parts of the assistant's earlier replies). Items that are not messages — a
 * function call's output, above all — are refused by name: Quarry calls no client tools.
 */
function turnsOf(input: z.infer<typeof responseCreateBody>['input']): ChatTurn[] {
  if (typeof input === 'string') return [{ role: 'user', text: input }];
  return input.map((item, index) => {
    const message = inputMessage.safeParse(item);
    if (!message.success || ('type' in item && item.type !== undefined && item.type !== 'message'))
      throw new QuarryError(
        'INVALID_INPUT',
        `Input item ${index} is a ${String(item.type)}: Quarry takes messages only (it calls no client tools, so there is no function call to answer).`,
        { details: { field: `input.${index}.type`, code: 'unsupported_input_item' } },
      );
    const { role, content } = message.data;
    return {
      role,
      text:
        typeof content === 'string'
          ? content
          : textOfParts(content, ['input_text', 'output_text', 'text', 'refusal'], `input.${index}.content`),
    };
  });
}

async function currentObject(context: ServiceContext, handle: ResponseHandle) {
  const [state, events] = await Promise.all([responseState(context, handle), turnEvents(context, handle)]);
  return responseObject(state, events);
}

/**
 * A turn's events as Responses stream events, numbered from 0; those up to `startingAfter` are left
 * out (they were sent before). Ends with the turn, or when the client goes (the turn runs on).
 */
function streamResponse(
  c: Parameters<typeof liveStream>[0],
  dependencies: ServerDependencies,
  handle: ResponseHandle,
  startingAfter: number,
) {
  const context = c.get('context');
  return liveStream(c, dependencies, `the response stream of ${responseId(handle)}`, async (sse, signal) => {
    const writer = new ResponseEventWriter(await responseState(context, handle));
    const send = async (events: ReturnType<ResponseEventWriter['created']>) => {
      for (const event of events) {
        if (event.sequence_number <= startingAfter) continue;
        await sse.writeSSE({ event: event.type, data: JSON.stringify(event) });
      }
    };
    await send(writer.created());
    const seen = [];
    const watch = new OutageWatch(context.config.server.outageWaitSeconds * 1000);
    for await (const event of eventsWithin(context, handle.sessionId, { after: handle.after, signal, watch })) {
      // A client waiting on an outage longer than the bound: the run stops (resumable) and its end,
      // which follows, is this response's failure with the outage as its error.
      if (event === 'overdue') {
        await stopSession(context, { sessionId: handle.sessionId, reason: outageStopReason(watch.current()!.cause) });
        continue;
      }
      watch.see(event);
      seen.push(event);
      if (endsTurn(event)) {
        await send(writer.end(await responseState(context, handle), seen));
        return;
      }
      await send(writer.next(event));
      reportDelivered(event.createdAt);
    }
  });
}

/**
 * Waits for a turn to end (or the client to go), then answers with it; an outage that lasts past
 * the bound stops the run (see `streamResponse`).
 */
async function waitForEnd(context: ServiceContext, handle: ResponseHandle, signal: AbortSignal) {
  const watch = new OutageWatch(context.config.server.outageWaitSeconds * 1000);
  for await (const event of eventsWithin(context, handle.sessionId, { after: handle.after, signal, watch })) {
    if (event === 'overdue') {
      await stopSession(context, { sessionId: handle.sessionId, reason: outageStopReason(watch.current()!.cause) });
      continue;
    }
    watch.see(event);
    if (endsTurn(event)) return;
  }
}

/**
 * The OpenAI Responses API under `/v1`: a response is a turn of a research session, background or
 * not, streamed or not; `previous_response_id` continues the session. Runs never depend on the
 * client staying connected, and any stream can be picked up again from a sequence number.
 */
export function responsesRoutes(dependencies: ServerDependencies) {
  return new OpenAPIHono<AppEnv>({ defaultHook: throwValidationError })
    .openapi(routes.create, async (c) => {
      const body = c.req.valid('json');
      refuseUnsupported(body, Object.keys(responseCreateBody.shape), responsesDefaults);
      checkModel(body.model);
      const context = c.get('context');
      const input = turnsOf(body.input);
      // A client's own task (a title, tags, follow-ups) asked without a previous response gets a short
      // answer, as the chat endpoint gives it, unstored, and starts no research.
      const chore = body.previous_response_id ? null : recognizeChore(input);
      if (chore) {
        const shape = { instructions: body.instructions ?? null, metadata: body.metadata ?? {} };
        if (!body.stream) {
          const { text, usage } = await answerChore(context, chore, c.req.raw.signal);
          return c.json(choreResponseObject({ ...shape, text, usage }), 200);
        }
        const pending = choreResponseObject({ ...shape, text: '', usage: { inputTokens: 0, outputTokens: 0 } });
        return liveStream(c, dependencies, 'a housekeeping response stream', async (sse, signal) => {
          const send = async (events: { type: string }[]) => {
            for (const event of events) await sse.writeSSE({ event: event.type, data: JSON.stringify(event) });
          };
          await send(choreStreamOpening(pending));
          const { text, usage } = await answerChore(context, chore, signal);
          const id = pending.id.replace(/^resp_chore_/, '');
          await send(choreStreamRest(choreResponseObject({ ...shape, text, usage, id, created: pending.created_at })));
        });
      }
      const handle = await createResponse(context, {
        input,
        temperature: body.temperature ?? undefined,
        instructions: body.instructions ?? undefined,
        previousResponseId: body.previous_response_id ?? undefined,
        metadata: body.metadata ?? undefined,
        background: body.background === true,
      });
      c.header('x-quarry-session-id', handle.sessionId);
      if (body.stream) return streamResponse(c, dependencies, handle, -1);
      if (!body.background) await waitForEnd(context, handle, c.req.raw.signal);
      return c.json(await currentObject(context, handle), 200);
    })
    .openapi(routes.retrieve, async (c) => {
      const context = c.get('context');
      const handle = parseResponseId(c.req.valid('param').id);
      const query = c.req.valid('query');
      if (query.stream === 'true') {
        await responseState(context, handle);
        return streamResponse(c, dependencies, handle, query.starting_after ?? -1);
      }
      return c.json(await currentObject(context, handle), 200);
    })
    .openapi(routes.cancel, async (c) => {
      const context = c.get('context');
      const handle = parseResponseId(c.req.valid('param').id);
      await cancelResponse(context, handle);
      // The run stops at its next step boundary: give it a moment, so the answer usually says so.
      const deadline = Date.now() + 5_000;
      let state = await responseState(context, handle);
      while (!state.ended && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        state = await responseState(context, handle);
      }
      return c.json(responseObject(state, await turnEvents(context, handle)), 200);
    })
    .openapi(routes.remove, async (c) => {
      const id = c.req.valid('param').id;
      await deleteResponse(c.get('context'), parseResponseId(id));
      return c.json({ id, object: 'response' as const, deleted: true as const }, 200);
    })
    .openapi(routes.inputItems, async (c) => {
      const state = await responseState(c.get('context'), parseResponseId(c.req.valid('param').id));
      const { order, limit, after, before } = c.req.valid('query');
      const items = state.input.map((message) => ({
        id: `msg_in_${message.id}`,
        type: 'message',
        role: 'user',
        status: 'completed',
        content: [{ type: 'input_text', text: message.content }],
      }));
      // In the order asked for, then the items after `after` and before `before` (cursors are item ids).
      let listed = order === 'desc' ? items.reverse() : items;
      for (const [cursor, keep] of [
        [after, (index: number, at: number) => index > at],
        [before, (index: number, at: number) => index < at],
      ] as const) {
        if (cursor === undefined) continue;
        const at = listed.findIndex((item) => item.id === cursor);
        if (at < 0)
          throw invalidInput(cursor === after ? 'after' : 'before', `no input item ${cursor} in this response`);
        listed = listed.filter((_, index) => keep(index, at));
      }
      const data = listed.slice(0, limit);
      return c.json(
        {
          object: 'list',
          data,
          first_id: data[0]?.id ?? null,
          last_id: data.at(-1)?.id ?? null,
          has_more: listed.length > limit,
        },
        200,
      );
    });
}
