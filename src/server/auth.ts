import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { LOCAL_OWNER } from '../service/service-context.ts';
import { errorBody } from './error-to-response.ts';
import type { AppEnv, ServerDependencies } from './server-env.ts';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * With no users, every request acts as the one local user (the server binds loopback only). With
 * users, a `Bearer` token is required; its hash is looked up and compared in constant time.
 */
export function authenticate(dependencies: ServerDependencies): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { store } = dependencies;
    const base = { store, workflows: dependencies.workflows, runner: dependencies.runner, env: dependencies.env };
    const users = await store.listUsers();
    if (users.length === 0) {
      c.set('context', { ...base, ownerId: LOCAL_OWNER });
      return next();
    }
    const header = c.req.header('authorization') ?? '';
    const token = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
    if (!token) return c.json(errorBody('UNAUTHORIZED', 'This server needs an API token: send "Authorization: Bearer <token>" (create one with quarry users add <name>).'), 401);
    const hash = hashToken(token);
    const user = await store.findUserByTokenHash(hash);
    // The lookup is by hash; the final comparison does not leak timing either way.
    const expected = Buffer.from(user ? hash : '0'.repeat(64));
    if (!user || !timingSafeEqual(Buffer.from(hash), expected)) return c.json(errorBody('UNAUTHORIZED', 'The API token is not valid.'), 401);
    c.set('context', { ...base, ownerId: user.id });
    return next();
  };
}
