import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import { followEvents, followSessionChanges } from '../../service/follow-events.ts';
import { isQuarryError, toErrorInfo } from '../../shared/errors.ts';
import { toWireEvent } from '../../shared/events.ts';
import { reportDelivered } from '../delivery-lag.ts';
import type { AppEnv, ServerDependencies } from '../server-env.ts';
import { throwValidationError } from '../validation-hook.ts';
import { errorResponses, eventsQuery, idParams, liveQuery } from '../wire.ts';
import { sessionSummary } from './to-wire.ts';

const tags = ['sessions'];

const routes = {
  live: createRoute({
    method: 'get',
    path: '/live',
    tags,
    summary:
      'One Server-Sent Events stream for a browser: the feed (`session`, `session-delete`) and the events of the sessions in `watch=<id>:<after>,…` as `session-event` ({ sessionId, event }); a session that cannot be followed gets `watch-error` ({ sessionId, error }) and the rest go on',
    request: { query: liveQuery },
    responses: { 200: { description: 'A text/event-stream of session changes and events' }, 400: errorResponses[400] },
  }),
  feed: createRoute({
    method: 'get',
    path: '/feed',
    tags,
    summary:
      'Server-Sent Events of the user’s sessions as they change: `session` (a SessionSummary: created, renamed, moving on, new status) and `session-delete` ({ id })',
    responses: { 200: { description: 'A text/event-stream of session changes' } },
  }),
  events: createRoute({
    method: 'get',
    path: '/{id}/events',
    tags,
    summary:
      'Server-Sent Events: `event` is the type, `id` the offset; Last-Event-ID or ?after= replays what was missed; an `error` event precedes a close on failure',
    request: { params: idParams, query: eventsQuery },
    responses: {
      200: { description: 'A text/event-stream of the session’s events' },
      404: errorResponses[404],
    },
  }),
};

/** The reconnection delay an event stream asks its client for: 2 to 8 seconds, at random. */
export function reconnectDelayMs(random: () => number = Math.random): number {
  return 2_000 + Math.floor(random() * 6_000);
}

/**
 * An SSE response that keeps the connection alive with heartbeats, ends when the client goes, and
 * says why it ends when it fails (an `error` event), so a client never waits on a dead stream.
 */
export function liveStream(
  c: Context<AppEnv>,
  dependencies: ServerDependencies,
  label: string,
  pump: (stream: SSEStreamingApi, signal: AbortSignal) => Promise<void>,
) {
  // HEAD asks what a GET would answer, not for the stream: it gets the stream's headers and nothing
  // is subscribed (a HEAD used to open a stream no one read, for good, and held shutdown up).
  if (c.req.method === 'HEAD')
    return c.body(null, 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  return streamSSE(c, async (stream) => {
    const controller = new AbortController();
    stream.onAbort(() => controller.abort());
    // How long a client waits before reconnecting, spread over a few seconds: when a server restarts,
    // its hundreds of clients come back over that time instead of all at once.
    await stream.write(`retry: ${reconnectDelayMs()}\n\n`);
    const heartbeat = setInterval(
      () => void stream.write(': heartbeat\n\n').catch(() => controller.abort()),
      (dependencies.heartbeatSeconds ?? 15) * 1000,
    );
    try {
      await pump(stream, controller.signal);
    } catch (error) {
      if (!isQuarryError(error)) (dependencies.log ?? console.error)(`quarry serve: ${label} failed`, error);
      await stream.writeSSE({ event: 'error', data: JSON.stringify(toErrorInfo(error)) }).catch(() => undefined);
    } finally {
      clearInterval(heartbeat);
    }
  });
}

/** The live routes under `/api/sessions`: a session's events, and the feed of the user's sessions. */
export function liveRoutes(dependencies: ServerDependencies) {
  return new OpenAPIHono<AppEnv>({ defaultHook: throwValidationError })
    .openapi(routes.live, async (c) => {
      const context = c.get('context');
      const watched = c.req.valid('query').watch ?? new Map<string, number>();
      return liveStream(c, dependencies, 'a live stream', async (stream, signal) => {
        // Writes from the feed and from every followed session, one after another.
        let writing: Promise<unknown> = stream.writeSSE({ event: 'ready', data: '{}' });
        const send = (message: { event: string; data: unknown }) => {
          writing = writing.then(() => stream.writeSSE({ event: message.event, data: JSON.stringify(message.data) }));
          return writing;
        };
        const feed = (async () => {
          for await (const change of followSessionChanges(context.store, { signal }))
            await send(
              change.type === 'session'
                ? { event: 'session', data: sessionSummary(change.session) }
                : { event: 'session-delete', data: { id: change.id } },
            );
        })();
        const sessions = [...watched].map(async ([sessionId, after]) => {
          try {
            await context.store.getSession(sessionId);
            for await (const event of followEvents(context.store, sessionId, { after, signal })) {
              await send({ event: 'session-event', data: { sessionId, event: toWireEvent(event) } });
              reportDelivered(event.createdAt);
            }
          } catch (error) {
            if (signal.aborted) return;
            await send({ event: 'watch-error', data: { sessionId, error: toErrorInfo(error) } });
          }
        });
        await Promise.all([feed, ...sessions]);
        await writing;
      });
    })
    .openapi(routes.feed, async (c) => {
      const context = c.get('context');
      return liveStream(c, dependencies, 'the session feed', async (stream, signal) => {
        // A first message at once: the client knows it is connected before anything changes.
        await stream.writeSSE({ event: 'ready', data: '{}' });
        for await (const change of followSessionChanges(context.store, { signal })) {
          await stream.writeSSE(
            change.type === 'session'
              ? { event: 'session', data: JSON.stringify(sessionSummary(change.session)) }
              : { event: 'session-delete', data: JSON.stringify({ id: change.id }) },
          );
        }
      });
    })
    .openapi(routes.events, async (c) => {
      const context = c.get('context');
      const sessionId = c.req.valid('param').id;
      const lastEventId = Number(c.req.header('last-event-id'));
      const start =
        Number.isSafeInteger(lastEventId) && lastEventId >= 0 ? lastEventId : (c.req.valid('query').after ?? 0);
      await context.store.getSession(sessionId);
      return liveStream(c, dependencies, `the event stream of ${sessionId}`, async (stream, signal) => {
        for await (const event of followEvents(context.store, sessionId, { after: start, signal })) {
          await stream.writeSSE({
            id: String(event.offset),
            event: event.type,
            data: JSON.stringify(toWireEvent(event)),
          });
          reportDelivered(event.createdAt);
        }
      });
    });
}
