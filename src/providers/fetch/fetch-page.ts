import { createHash } from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { QuarryError } from '../../shared/errors.ts';
import { parseRetryAfter } from '../../shared/retry.ts';
import { extractHtml, normalizeText } from '../extract/extract-html.ts';
import { extractPdf } from '../extract/extract-pdf.ts';
import { type ExtractedDocument, kindFromContentType } from '../extract/extracted-document.ts';
import type { HostGate } from './host-gate.ts';
import { checkAddress, guardedLookup, type NetworkPolicy } from './network-guard.ts';

export interface FetchPageOptions extends NetworkPolicy {
  signal?: AbortSignal;
  /** Time to open the connection, per hop. Default 10 s. */
  connectTimeoutMs?: number;
  /** Time for the whole fetch, redirects included. Default 30 s. */
  totalTimeoutMs?: number;
  /** Largest body read (after decompression). Default 10 MB. */
  maxBytes?: number;
  /** Redirects followed. Default 5. */
  maxRedirects?: number;
  userAgent?: string;
  /** Per-host politeness shared by the process's fetches (concurrency, spacing, Retry-After). */
  gate?: HostGate;
}

export interface FetchedPage {
  /** The URL asked for. */
  url: string;
  /** The URL that answered, after redirects. */
  finalUrl: string;
  status: number;
  contentType: string;
  /** sha-256 of the body bytes. */
  contentHash: string;
  bytes: number;
  document: ExtractedDocument;
}

/** A fetch that failed; `isRetryable` for timeouts, resets and 5xx/429, with the server's `Retry-After`. */
export class FetchError extends QuarryError {
  constructor(
    message: string,
    options: { url: string; status?: number; isRetryable: boolean; retryAfterMs?: number | null; cause?: unknown },
  ) {
    super('STEP_FAILED', `Fetching ${options.url} failed: ${message}`, {
      isRetryable: options.isRetryable,
      retryAfterMs: options.retryAfterMs ?? null,
      details: { url: options.url, status: options.status ?? null },
      cause: options.cause,
    });
    this.name = 'FetchError';
  }
}

function decoded(response: IncomingMessage): NodeJS.ReadableStream {
  const encoding = (response.headers['content-encoding'] ?? '').toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return response.pipe(createGunzip());
  if (encoding === 'deflate') return response.pipe(createInflate());
  if (encoding === 'br') return response.pipe(createBrotliDecompress());
  return response;
}

/**
 * Connections kept alive between fetches, one pool per network policy: a socket is checked by the
 * guard when it connects, so a request may only reuse one that its own policy would have let
 * connect (a connection opened under `allow: ['localhost']` never carries a fetch that refuses it).
 */
const pools = new Map<string, { http: http.Agent; https: https.Agent }>();

function poolFor(policy: NetworkPolicy): { http: http.Agent; https: https.Agent } {
  const key = JSON.stringify([...(policy.allow ?? [])].map((entry) => entry.toLowerCase()).sort());
  let pool = pools.get(key);
  if (!pool) {
    // As Node's global agent keeps them: idle sockets closed after 5 s.
    const settings = { keepAlive: true, timeout: 5_000, scheduling: 'lifo' as const };
    pool = { http: new http.Agent(settings), https: new https.Agent(settings) };
    pools.set(key, pool);
  }
  return pool;
}

/** One HTTP exchange (no redirects followed); resolves with the response head. */
function requestOnce(
  url: URL,
  options: Required<Pick<FetchPageOptions, 'connectTimeoutMs' | 'userAgent'>> & NetworkPolicy,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // Node skips `lookup` for IP literals, so those are checked here.
  if (isIP(host)) checkAddress(host, host, options);
  const secure = url.protocol === 'https:';
  const client = secure ? https : http;
  const pool = poolFor(options);
  return new Promise((resolve, reject) => {
    const request = client.request(url, {
      agent: secure ? pool.https : pool.http,
      method: 'GET',
      headers: {
        'user-agent': options.userAgent,
        accept: 'text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,*/*;q=0.5',
        'accept-encoding': 'gzip, deflate, br',
      },
      lookup: guardedLookup(options) as never,
      signal,
    });
    const connectTimer = setTimeout(
      () => request.destroy(new Error(`no connection within ${options.connectTimeoutMs} ms`)),
      options.connectTimeoutMs,
    );
    request.on('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connectTimer);
      socket.once('connect', () => clearTimeout(connectTimer));
    });
    request.on('response', (response) => {
      clearTimeout(connectTimer);
      resolve(response);
    });
    request.on('error', (error) => {
      clearTimeout(connectTimer);
      reject(error);
    });
    request.end();
  });
}

async function readBody(response: IncomingMessage, maxBytes: number, url: string): Promise<Buffer> {
  const length = Number(response.headers['content-length'] ?? 0);
  if (length > maxBytes) {
    response.destroy();
    throw new FetchError(`the body is ${length} bytes; the limit is ${maxBytes}`, { url, isRetryable: false });
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of decoded(response)) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) {
      response.destroy();
      throw new FetchError(`the body exceeds the limit of ${maxBytes} bytes`, { url, isRetryable: false });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

async function extract(body: Buffer, contentType: string, url: string): Promise<ExtractedDocument> {
  const kind = kindFromContentType(contentType);
  if (kind === 'pdf') return extractPdf(body, new URL(url).pathname.split('/').pop() || url);
  if (kind === 'html') return extractHtml(body.toString('utf8'), { url });
  if (kind === 'text' || kind === 'markdown')
    return { title: url, text: normalizeText(body.toString('utf8')), linkRanges: [], kind };
  throw new FetchError(`unsupported content type "${contentType || 'none'}"`, { url, isRetryable: false });
}

/**
 * Fetches a page and extracts its main text. Every hop is checked by the private-network guard
 * after DNS resolution; redirects, time, and size are capped; the caller's signal aborts it. With a
 * gate, the fetch waits its turn at the page's host, and a `Retry-After` the host sends pauses every
 * fetch to it.
 */
export async function fetchPage(url: string, options: FetchPageOptions = {}): Promise<FetchedPage> {
  const { gate } = options;
  let host: string;
  try {
    host = new URL(url).host;
  } catch {
    throw new FetchError('not a valid URL', { url, isRetryable: false });
  }
  if (!gate) return fetchOnce(url, options);
  return gate.run(
    host,
    () =>
      fetchOnce(url, options).catch((error: unknown) => {
        if (error instanceof FetchError && error.retryAfterMs !== null) gate.pause(host, error.retryAfterMs);
        throw error;
      }),
    options.signal,
  );
}

async function fetchOnce(url: string, options: FetchPageOptions): Promise<FetchedPage> {
  const settings = {
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
    userAgent: options.userAgent ?? 'Quarry/0.1 (deep research; +https://github.com/quarry)',
    allow: options.allow,
  };
  const totalTimeoutMs = options.totalTimeoutMs ?? 30_000;
  const maxRedirects = options.maxRedirects ?? 5;
  const signal = AbortSignal.any([AbortSignal.timeout(totalTimeoutMs), ...(options.signal ? [options.signal] : [])]);
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    throw new FetchError('not a valid URL', { url, isRetryable: false });
  }
  for (let hop = 0; ; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:')
      throw new FetchError(`only http and https URLs are fetched, not ${current.protocol}`, {
        url,
        isRetryable: false,
      });
    let response: IncomingMessage;
    try {
      response = await requestOnce(current, settings, signal);
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      const name = (error as Error).name;
      if (name === 'BlockedAddressError')
        throw new FetchError((error as Error).message, { url, isRetryable: false, cause: error });
      const timedOut = signal.aborted || name === 'AbortError';
      throw new FetchError(timedOut ? `no complete answer within ${totalTimeoutMs} ms` : (error as Error).message, {
        url,
        isRetryable: true,
        cause: error,
      });
    }
    const status = response.statusCode ?? 0;
    if (status >= 300 && status < 400 && response.headers.location) {
      response.resume();
      if (hop >= maxRedirects)
        throw new FetchError(`more than ${maxRedirects} redirects`, { url, status, isRetryable: false });
      current = new URL(response.headers.location, current);
      continue;
    }
    if (status < 200 || status >= 300) {
      response.resume();
      throw new FetchError(`HTTP ${status}`, {
        url,
        status,
        isRetryable: status === 429 || status >= 500,
        retryAfterMs: parseRetryAfter(response.headers['retry-after']),
      });
    }
    const contentType = String(response.headers['content-type'] ?? '');
    let body: Buffer;
    try {
      body = await readBody(response, options.maxBytes ?? 10 * 1024 * 1024, url);
    } catch (error) {
      if (error instanceof FetchError) throw error;
      if (options.signal?.aborted) throw options.signal.reason;
      throw new FetchError(
        signal.aborted ? `no complete answer within ${totalTimeoutMs} ms` : (error as Error).message,
        { url, isRetryable: true, cause: error },
      );
    }
    let document: ExtractedDocument;
    try {
      document = await extract(body, contentType, current.href);
    } catch (error) {
      if (error instanceof FetchError) throw error;
      throw new FetchError(`the content could not be read: ${(error as Error).message}`, {
        url,
        isRetryable: false,
        cause: error,
      });
    }
    return {
      url,
      finalUrl: current.href,
      status,
      contentType,
      contentHash: createHash('sha256').update(body).digest('hex'),
      bytes: body.length,
      document,
    };
  }
}
