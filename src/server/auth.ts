import { createHash } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { LOCAL_OWNER } from '../service/service-context.ts';
import { QuarryError } from '../shared/errors.ts';
import { ownerStore } from '../store/owner-store.ts';
import { clientAddress } from './client-limits.ts';
import { hostName, isLoopback } from './request-guard.ts';
import type { AppEnv, AuthMode, ServerDependencies } from './server-env.ts';

/** The cookie the web UI's sign-in sets: the browser's own token, HttpOnly, SameSite=Strict, for as long as it lasts. */
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
 * Whether a request may act as the one local user, decided per request: only on a server that
 * serves loopback alone (bound to loopback, no public name or URL), for a request that came
 * straight from this machine (its Host a loopback name, no proxy's forwarding headers), while the
 * store has no users. Adding the first user requires tokens from that moment; a server exposed
 * beyond loopback never has a local user, so removing the last user locks everyone out.
 */
async function actsAsLocalUser(dependencies: ServerDependencies, headers: Headers): Promise<boolean> {
  if (dependencies.exposure !== 'loopback') return false;
  if (headers.has('forwarded') || headers.has('x-forwarded-for') || headers.has('x-forwarded-host')) return false;
  if (!isLoopback(hostName(headers.get('host') ?? ''))) return false;
  return !(await dependencies.store.hasUsers());
}

/** How the request is authenticated: `local` (the one local user) or `tokens`. */
export async function authModeOf(dependencies: ServerDependencies, headers: Headers): Promise<AuthMode> {
  return (await actsAsLocalUser(dependencies, headers)) ? 'local' : 'tokens';
}

/**
 * Who is asking: the local user (see `actsAsLocalUser`), or the owner of a valid token (header or
 * sign-in cookie), whose hash is looked up and must be unexpired.
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
    if (await actsAsLocalUser(dependencies, c.req.raw.headers)) {
      c.set('context', context(LOCAL_OWNER));
      c.set('user', null);
      c.set('auth', 'local');
      return next();
    }
    const token = requestToken(c.req.header('authorization'), getCookie(c, TOKEN_COOKIE));
    if (!token) {
      throw unauthorized(
        'This server needs an API token: send "Authorization: Bearer <token>", or sign in with it in the web UI (quarry users add <name> creates one).',
      );
    }
    const client = clientAddress(c);
    dependencies.authThrottle.check(client);
    const found = await dependencies.store.findToken(hashToken(token));
    if (!found) {
      dependencies.authThrottle.fail(client);
      throw unauthorized('The API token is not valid (or has expired, or was revoked).');
    }
    c.set('context', context(found.user.id));
    c.set('user', { id: found.user.id, name: found.user.name });
    c.set('auth', 'tokens');
    return next();
  };
}
