import type { Server } from 'node:http';
import { BlockList, isIP, type Socket } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import type { TrustProxy } from '../config/quarry-config.ts';
import { type Clock, systemClock } from '../shared/clock.ts';
import { QuarryError } from '../shared/errors.ts';

/** The address a connection came from, as its socket says (`::ffff:` of IPv4-mapped addresses off). */
function socketAddress(c: Context): string {
  try {
    return (getConnInfo(c).remote.address ?? 'unknown').replace(/^::ffff:/, '');
  } catch {
    return 'unknown';
  }
}

/** The addresses a request passed through, nearest last: `X-Forwarded-For`, else `Forwarded`'s `for=`. */
function forwardedChain(headers: Headers): string[] {
  const xff = headers.get('x-forwarded-for');
  if (xff)
    return xff
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
  const forwarded = headers.get('forwarded');
  if (!forwarded) return [];
  return [...forwarded.matchAll(/for=("?)\[?([^\]";,]+)\]?\1/gi)].map((match) => match[2]!.replace(/:\d+$/, ''));
}

/** True when `address` is one of `trusted` (addresses, or CIDR ranges of either family). */
export function isTrusted(address: string, trusted: readonly string[]): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return trusted.some((entry) => {
    const [base, bits] = entry.split('/');
    if (bits === undefined) return base === address;
    const list = new BlockList();
    list.addSubnet(base!, Number(bits), isIP(base!) === 6 ? 'ipv6' : 'ipv4');
    return list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  });
}

/**
 * The address a request came from: its socket's, unless the operator trusts the proxy in front
 * (`QUARRY_TRUST_PROXY`), whose forwarding headers then name the client — the address `hops`
 * proxies back, or the nearest that is not a trusted proxy's. Never decides local mode.
 */
export function clientAddress(c: Context, trust: TrustProxy | null = null): string {
  const socket = socketAddress(c);
  if (!trust) return socket;
  const chain = forwardedChain(c.req.raw.headers);
  if ('hops' in trust) return chain[chain.length - trust.hops] ?? chain[0] ?? socket;
  if (!isTrusted(socket, trust.addresses)) return socket;
  for (const address of [...chain].reverse()) if (!isTrusted(address, trust.addresses)) return address;
  return chain[0] ?? socket;
}

export interface AuthThrottleOptions {
  /** Failed attempts a client may make per window. Default 20. */
  failures?: number;
  /** The window, in ms. Default a minute. */
  windowMs?: number;
  clock?: Clock;
}

/**
 * Slows down token guessing: a client (by address) that failed to authenticate `failures` times in
 * a window is refused with `RATE_LIMITED` (429, Retry-After) until the window ends, before its
 * token is even looked at. Successful requests do not count.
 */
export class AuthThrottle {
  private readonly failures: number;
  private readonly windowMs: number;
  private readonly clock: Clock;
  private readonly clients = new Map<string, { count: number; resetAt: number }>();

  constructor(options: AuthThrottleOptions = {}) {
    this.failures = options.failures ?? 20;
    this.windowMs = options.windowMs ?? 60_000;
    this.clock = options.clock ?? systemClock;
  }

  /** Throws `RATE_LIMITED` when `client` has used up its failures in this window. */
  check(client: string): void {
    const entry = this.clients.get(client);
    const now = this.clock.now();
    if (!entry || entry.resetAt <= now) return;
    if (entry.count >= this.failures) {
      throw new QuarryError('RATE_LIMITED', 'Too many failed sign-ins from this address; try again later.', {
        isRetryable: true,
        retryAfterMs: entry.resetAt - now,
      });
    }
  }

  /** Counts a failed attempt by `client`. */
  fail(client: string): void {
    const now = this.clock.now();
    const entry = this.clients.get(client);
    if (!entry || entry.resetAt <= now) this.clients.set(client, { count: 1, resetAt: now + this.windowMs });
    else entry.count += 1;
    // Forget finished windows now and then, so the map stays as small as the set of recent failures.
    if (this.clients.size > 10_000)
      for (const [key, value] of this.clients) if (value.resetAt <= now) this.clients.delete(key);
  }
}

/**
 * How long a client may take: its headers within `headersMs` (a client trickling them a byte at a
 * time holds a connection otherwise), an idle kept-alive connection closed after `idleMs`; Node
 * checks every `checkEveryMs` (its own default is 30 s, which held trickling clients 50 s and more).
 */
export interface ClientTimeouts {
  headersMs: number;
  idleMs: number;
  checkEveryMs: number;
}

export const CLIENT_TIMEOUTS: ClientTimeouts = { headersMs: 20_000, idleMs: 5_000, checkEveryMs: 2_000 };

/** Connections past their client's limit: each is answered 429 and closed (see `limitConnections`). */
const overLimit = new WeakSet<Socket>();

/** How long a connection past its limit may take to send its request before it is dropped, in ms. */
const OVER_LIMIT_GRACE_MS = 5_000;

/**
 * Connection hygiene for the HTTP server: at most `perClient` open connections per address (a client
 * holding hundreds open, slowly, starves everyone), headers within 20 s, and a malformed request (too
 * many or too large headers) answered with a JSON error like every other refusal instead of Node's
 * bare 400. A connection past the limit gets its request answered `429` with `Retry-After` and
 * `Connection: close` (`refuseOverLimit`), so a client in a reconnect storm is told when to come back
 * instead of seeing its connection vanish (HTTP clients retry a reset at once, and wait forever on
 * one they keep retrying); one that sends nothing is dropped after 5 s.
 */
export function limitConnections(
  server: Server,
  perClient: number,
  trust: TrustProxy | null = null,
  timeouts: ClientTimeouts = CLIENT_TIMEOUTS,
): void {
  const open = new Map<string, number>();
  server.headersTimeout = timeouts.headersMs;
  // An idle kept-alive connection closes after 5 s (the headers timeout is checked every 2 s: see
  // `serverOptions` in serve.ts).
  server.keepAliveTimeout = timeouts.idleMs;
  server.on('connection', (socket: Socket) => {
    const address = (socket.remoteAddress ?? 'unknown').replace(/^::ffff:/, '');
    // A trusted proxy carries every client's connections: its own count says nothing of any client
    // (each user's streams are still capped per user, `stream-limit.ts`).
    if (trust && ('hops' in trust || isTrusted(address, trust.addresses))) return;
    const count = (open.get(address) ?? 0) + 1;
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
    if (count > perClient) {
      overLimit.add(socket);
      socket.setTimeout(OVER_LIMIT_GRACE_MS, () => socket.destroy());
    }
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const tooSlow = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const body = JSON.stringify({
      error: {
        code: tooLarge ? 'PAYLOAD_TOO_LARGE' : 'INVALID_INPUT',
        message: tooLarge
          ? 'The request headers are too large.'
          : tooSlow
            ? `The request headers did not arrive within ${timeouts.headersMs / 1000} s.`
            : 'The request is not valid HTTP.',
      },
    });
    const status = tooLarge
      ? '431 Request Header Fields Too Large'
      : tooSlow
        ? '408 Request Timeout'
        : '400 Bad Request';
    socket.end(
      `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}

/**
 * Middleware answering a request on a connection past its client's limit: `429 RATE_LIMITED` with
 * `Retry-After` (2–8 s, spread so a storm comes back spread out) and `Connection: close`.
 */
export function refuseOverLimit(retryAfterSeconds: () => number): MiddlewareHandler {
  return async (c, next) => {
    const socket = (c.env as { incoming?: { socket?: Socket } } | undefined)?.incoming?.socket;
    if (!socket || !overLimit.has(socket)) return next();
    const seconds = retryAfterSeconds();
    return c.json(
      {
        error: {
          code: 'RATE_LIMITED',
          message: `Too many connections from your address at once; try again in ${seconds} s.`,
          details: { retryAfterSeconds: seconds },
        },
      },
      429,
      { 'retry-after': String(seconds), connection: 'close' },
    );
  };
}
