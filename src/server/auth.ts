import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { withLibrary } from '../service/library.ts';
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

/** Headers a proxy adds, of any kind: a request that carries one came through a proxy, not from this machine's user. */
const PROXY_HEADERS = [
  'forwarded',
  'via',
  'x-real-ip',
  'x-client-ip',
  'client-ip',
  'true-client-ip',
  'cf-connecting-ip',
  'fastly-client-ip',
  'x-cluster-client-ip',
];

export function throughProxy(headers: Headers): boolean {
  if (PROXY_HEADERS.some((name) => headers.has(name))) return true;
  for (const name of headers.keys()) if (name.startsWith('x-forwarded-') || name.startsWith('x-original-')) return true;
  return false;
}

/**
 * Whether a request may act as the one local user, decided per request: only on a server that
 * serves loopback alone (bound to loopback, no public name or URL, no trusted proxy), for a request
 * that cannot be a proxy's traffic — from a loopback address, to a loopback Host, with no proxy
 * header of any kind (`Forwarded`, `X-Forwarded-*`, `X-Real-IP`, `Via`…), over HTTP/1.1 or newer
 * (nginx's default `proxy_pass` speaks HTTP/1.0 and adds nothing) — while the store has no users.
 * Adding the first user requires tokens from that moment; a server exposed beyond loopback never
 * has a local user, so removing the last user locks everyone out.
 */
async function actsAsLocalUser(dependencies: ServerDependencies, request: LocalRequest): Promise<boolean> {
  if (dependencies.exposure !== 'loopback') return false;
  if (throughProxy(request.headers)) return false;
  if (!isLoopback(hostName(request.headers.get('host') ?? ''))) return false;
  if (request.peer !== null && !isLoopback(request.peer)) return false;
  if (request.httpVersion !== null && Number.parseFloat(request.httpVersion) < 1.1) return false;
  return !(await dependencies.store.hasUsers());
}

/** What local mode is decided on: the request's headers, the address it came from and its HTTP version. */
interface LocalRequest {
  headers: Headers;
  peer: string | null;
  httpVersion: string | null;
}

export function localRequest(c: Context<AppEnv>): LocalRequest {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return {
    headers: c.req.raw.headers,
    peer: incoming?.socket?.remoteAddress?.replace(/^::ffff:/, '') ?? null,
    httpVersion: incoming?.httpVersion ?? null,
  };
}

/** How the request is authenticated: `local` (the one local user) or `tokens`. */
export async function authModeOf(dependencies: ServerDependencies, c: Context<AppEnv>): Promise<AuthMode> {
  return (await actsAsLocalUser(dependencies, localRequest(c))) ? 'local' : 'tokens';
}

/**
 * Who is asking: the local user (see `actsAsLocalUser`), or the owner of a valid token (header or
 * sign-in cookie), whose hash is looked up and must be unexpired.
 */
export function authenticate(dependencies: ServerDependencies): MiddlewareHandler<AppEnv> {
  const context = (ownerId: string) => ({
    store: ownerStore(dependencies.store, ownerId),
    config: dependencies.config,
    folders: withLibrary(dependencies.folders, dependencies.config, ownerId),
    indexer: dependencies.indexer,
    workflows: dependencies.workflows,
    runner: dependencies.runner,
    enforceLimits: true,
    printer: dependencies.printer,
  });
  return async (c, next) => {
    if (await actsAsLocalUser(dependencies, localRequest(c))) {
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
    const client = clientAddress(c, dependencies.config.server.trustProxy);
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
