import type { Context, MiddlewareHandler } from 'hono';
import { QuarryError } from '../shared/errors.ts';
import type { AppEnv } from './server-env.ts';

/** Whether a request asks for an event stream (Server-Sent Events) that stays open. */
async function asksForStream(c: Context<AppEnv>): Promise<boolean> {
  const path = c.req.path;
  if (c.req.method === 'GET') return /\/(feed|events|live)$/.test(path) || c.req.query('stream') === 'true';
  if (c.req.method !== 'POST') return false;
  // MCP answers a call with a stream of progress and then its result.
  if (path === '/mcp') return true;
  if (path === '/v1/chat/completions' || path === '/v1/responses') {
    const body = (await c.req.json().catch(() => undefined)) as { stream?: unknown } | undefined;
    return body?.stream === true;
  }
  return false;
}

/**
 * A body that calls `release` once, when it has been read to the end, failed, or was cancelled
 * (the client went away).
 */
function releasingBody(body: ReadableStream<Uint8Array>, release: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    async cancel(reason) {
      release();
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}

/**
 * At most `limit` event streams open at once per user in this process (`RATE_LIMITED`, 429, past
 * it): each stream holds a connection and a store subscription, and a thousand of one user's would
 * slow everyone's research. Runs after authentication; the slot is taken before the route runs (a
 * refused request starts nothing) and given back when the stream ends.
 */
export function limitStreams(
  limit: number,
  opened: () => () => void = () => () => undefined,
): MiddlewareHandler<AppEnv> {
  const open = new Map<string, number>();
  return async (c, next) => {
    if (!(await asksForStream(c))) return next();
    const user = c.get('user')?.id ?? 'local';
    const count = open.get(user) ?? 0;
    if (count >= limit) {
      throw new QuarryError(
        'RATE_LIMITED',
        `You have ${count} event streams open here; the limit is ${limit}. Close some (a browser tab, a client) first.`,
        { details: { limit }, isRetryable: true, retryAfterMs: 5_000 },
      );
    }
    open.set(user, count + 1);
    const closed = opened();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      closed();
      const left = (open.get(user) ?? 1) - 1;
      if (left > 0) open.set(user, left);
      else open.delete(user);
    };
    try {
      await next();
    } catch (error) {
      release();
      throw error;
    }
    const body = c.res.body;
    if (!body || !(c.res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      release();
      return;
    }
    c.res = new Response(releasingBody(body, release), c.res);
  };
}
