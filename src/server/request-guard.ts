import { isIP } from 'node:net';
import type { MiddlewareHandler } from 'hono';
import { invalidInput, QuarryError } from '../shared/errors.ts';
import { parseJsonText } from '../shared/json-text.ts';
import type { AppEnv, ServerDependencies } from './server-env.ts';

const stateChanging = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The host name of a `Host` header or an origin's authority, lower case, without port or brackets. */
export function hostName(authority: string): string {
  const trimmed = authority.trim().toLowerCase();
  if (trimmed.startsWith('[')) return trimmed.slice(1, trimmed.indexOf(']'));
  const colon = trimmed.lastIndexOf(':');
  return colon > 0 && !trimmed.slice(0, colon).includes(':') ? trimmed.slice(0, colon) : trimmed;
}

/** True for `localhost` and loopback addresses (127.0.0.0/8, ::1), judged by parsing, never by prefix. */
export function isLoopback(host: string): boolean {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (name === 'localhost') return true;
  const family = isIP(name);
  if (family === 4) return name.split('.')[0] === '127';
  if (family === 6) return name === '::1' || /^::ffff:127\./.test(name);
  return false;
}

/** Names a request may address: the bound host, loopback names and the configured public names. */
export function allowedHostNames(boundHost: string, publicNames: string[]): Set<string> {
  const names = new Set(['localhost', ...publicNames.map((name) => hostName(name))]);
  if (boundHost !== '0.0.0.0' && boundHost !== '::') names.add(hostName(boundHost));
  return names;
}

/**
 * A request must name this server: a `Host` that is an IP address, `localhost`, the bound name or a
 * configured public name. A web page on another site whose DNS now points here (DNS rebinding) sends
 * its own name and is refused.
 */
function checkHost(host: string | undefined, allowed: Set<string>): void {
  const name = host ? hostName(host) : '';
  if (name && (isIP(name) || allowed.has(name))) return;
  throw new QuarryError(
    'FORBIDDEN',
    `This server does not answer to "${host ?? ''}". Use its address, or add the name with QUARRY_PUBLIC_NAMES.`,
  );
}

/**
 * A browser's state-changing request must come from this server's own pages: its `Origin` (when
 * sent) must name the same host and port as `Host`. Clients that send no `Origin` (curl, SDKs) pass.
 */
function checkOrigin(origin: string | undefined, host: string | undefined): void {
  if (origin === undefined) return;
  let authority = '';
  try {
    authority = new URL(origin).host;
  } catch {
    // "null" and other opaque origins fall through to the refusal.
  }
  if (authority && host && authority.toLowerCase() === host.trim().toLowerCase()) return;
  throw new QuarryError('FORBIDDEN', `Requests from ${origin} may not change anything here.`);
}

function hasBody(headers: Headers): boolean {
  return Number(headers.get('content-length') ?? 0) > 0 || headers.has('transfer-encoding');
}

/** The first path (as `a.b[0]`) of a string holding a NUL character, or null. */
function findNul(value: unknown, path: string, depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path || 'body' : null;
  if (value === null || typeof value !== 'object' || depth > 120) return null;
  for (const [key, item] of Object.entries(value)) {
    const found = findNul(item, Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key, depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * The checks every request passes before routing: who it addresses (`Host`), where it comes from
 * (`Origin`, for state changes), that bodies of state changes are JSON (`415` otherwise, so a page
 * cannot post `text/plain` JSON), and that JSON bodies nest sanely and hold no NUL characters. The
 * parsed body is kept for the route's validator, so it is read once.
 */
/**
 * What orchestrators and scrapers read by whatever name they reach the server at (a compose service,
 * a Kubernetes pod): no user data, no state change, no cookie honored — nothing a rebound name could
 * steal or do.
 */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

export function guardRequests(dependencies: Pick<ServerDependencies, 'allowedHosts'>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const host = c.req.header('host');
    const probe = (c.req.method === 'GET' || c.req.method === 'HEAD') && PROBES.has(c.req.path);
    if (!probe) checkHost(host, dependencies.allowedHosts);
    const url = c.req.url;
    if (/%00/i.test(url) || url.includes('\u0000')) throw invalidInput('url', 'must not contain NUL characters');
    if (stateChanging.has(c.req.method)) {
      checkOrigin(c.req.header('origin'), host);
      const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      // Files for the library come as a multipart form, streamed by their route; nothing else does.
      const upload = c.req.method === 'POST' && c.req.path === '/api/documents' && type === 'multipart/form-data';
      if (hasBody(c.req.raw.headers) && !upload) {
        if (!/^application\/([\w.-]+\+)?json$/.test(type)) {
          throw new QuarryError(
            'UNSUPPORTED_MEDIA_TYPE',
            'State changes take a JSON body: send Content-Type: application/json.',
            { details: { field: 'content-type' } },
          );
        }
        const body = parseJsonText(await c.req.text(), 'body');
        const nul = findNul(body, '');
        if (nul) throw invalidInput(nul, 'must not contain NUL characters');
        c.req.bodyCache.json = Promise.resolve(body);
      }
    }
    await next();
  };
}
