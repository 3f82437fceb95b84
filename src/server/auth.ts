import { createHash } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { LOCAL_OWNER } from '../service/service-context.ts';
import { QuarryError } from '../store/errors.ts';
import { ownerStore } from '../store/owner-store.ts';
import type { AppEnv, ServerDependencies } from './server-env.ts';

/** The cookie the web UI's sign-in sets: the browser's own token, HttpOnly, SameSite=Strict, for the browser session. */
export const TOKEN_COOKIE = 'quarry_token';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A request's token: `Authorization: Bearer …`, else the sign-in cookie. */
export function requestToken(header: string | undefined, cookie: string | undefined): string | null {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  return bearer ?? (cookie?.trim() || null);
}

function unauthorized(message: string): QuarryError {
  return new QuarryError('UNAUTHORIZED', message);
}

/**
 * Who is asking. In `local` mode every request acts as the one local user. In `tokens` mode a valid
 * token is required (header or sign-in cookie); its hash is looked up and must be unexpired. The mode
 * never changes while the server runs, so deleting the last user locks everyone out, never opens it.
 */
export function authenticate(dependencies: ServerDependencies): MiddlewareHandler<AppEnv> {
  const context = (ownerId: string) => ({
    store: ownerStore(dependencies.store, ownerId),
    config: dependencies.config,
    folders: dependencies.folders,
    indexer: dependencies.indexer,
    workflows: dependencies.workflows,
    runner: dependencies.runner,
    enforceLimits: true,
  });
  return async (c, next) => {
    if (dependencies.auth === 'local') {
      c.set('context', context(LOCAL_OWNER));
      c.set('user', null);
      return next();
    }
    const token = requestToken(c.req.header('authorization'), getCookie(c, TOKEN_COOKIE));
    if (!token) {
      throw unauthorized(
        'This server needs an API token: send "Authorization: Bearer <token>", or sign in with it in the web UI (quarry users add <name> creates one).',
      );
    }
    const user = await dependencies.store.findUserByTokenHash(hashToken(token));
    if (!user) throw unauthorized('The API token is not valid (or has expired, or was revoked).');
    c.set('context', context(user.id));
    c.set('user', { id: user.id, name: user.name });
    return next();
  };
}
