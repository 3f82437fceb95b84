import { existsSync } from 'node:fs';
import { serveStatic } from '@hono/node-server/serve-static';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { compress } from 'hono/compress';
import { QUARRY_VERSION } from '../config/version.ts';
import { LIBRARY_FILE_BYTES } from '../service/library.ts';
import { EXPORT_CONTENT_SECURITY_POLICY } from '../service/session-export.ts';
import { sharedReport } from '../service/share-links.ts';
import { isQuarryError, QuarryError } from '../shared/errors.ts';
import {
  continuesTrace,
  inSpan,
  recordSpan,
  SpanKind,
  traceContextOfHeaders,
  tracingEnabled,
} from '../shared/tracing.ts';
import { migrations } from '../store/migrations/index.ts';
import { authenticate, localRequest } from './auth.ts';
import { refuseOverLimit } from './client-limits.ts';
import { errorBody, errorToResponse } from './error-to-response.ts';
import { mcpHandler } from './mcp-http.ts';
import { serverMetrics } from './metrics.ts';
import { metricsRefusal } from './metrics-access.ts';
import { openAiRoutes } from './openai-compatible.ts';
import { responsesRoutes } from './openai-responses.ts';
import { completeDocument, documentInfo, registerPlainRoutes } from './openapi-document.ts';
import { guardRequests, hostName } from './request-guard.ts';
import { accountRoutes, publicAccountRoutes } from './routes/account-routes.ts';
import { capabilityRoutes } from './routes/capability-routes.ts';
import { FILES_PER_REQUEST, libraryRoutes } from './routes/library-routes.ts';
import { liveRoutes, reconnectDelayMs } from './routes/live-routes.ts';
import { sessionRoutes } from './routes/session-routes.ts';
import type { AppEnv, ServerDependencies } from './server-env.ts';
import { limitStreams } from './stream-limit.ts';
import { throwValidationError } from './validation-hook.ts';

/** The policy of the web UI's pages: its own scripts and styles only, no remote anything. */
export const WEB_CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const tooLarge = (limit: number) =>
  bodyLimit({
    maxSize: limit,
    onError: () => {
      throw new QuarryError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`);
    },
  });

/** Requests to API paths no route answers: 404 JSON, never the web page. */
function isApiPath(path: string): boolean {
  return /^\/(api|v1|mcp|\.well-known)(\/|$)/.test(path);
}

/** This server's address as its clients use it: the operator's public URL, else the request's own origin. */
export function publicOrigin(dependencies: ServerDependencies, requestUrl: string): string {
  return (dependencies.config.server.publicUrl ?? new URL(requestUrl).origin).replace(/\/+$/, '');
}

/** How long `/readyz` waits for the store before saying it is not reachable. */
const READY_STORE_TIMEOUT_MS = 2_000;
/** A read nobody traced that takes this long (ms) is recorded as a span all the same. */
const SLOW_READ_MS = 1_000;

/**
 * Whether this process can do its work: the store answers (within a bound), its schema is the one
 * this Quarry's migrations make, and the runner, when the process has one, is claiming sessions.
 */
async function readiness(dependencies: ServerDependencies) {
  const { store, runner } = dependencies;
  const expected = migrations.at(-1)?.version ?? 0;
  let storeCheck = 'ok';
  let timer: NodeJS.Timeout | undefined;
  const timeoutMessage = `no answer within ${READY_STORE_TIMEOUT_MS} ms`;
  try {
    await Promise.race([
      store.countSessionsByStatus(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(timeoutMessage)), READY_STORE_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    // Anyone can ask /readyz: the error's code, never its message (which names the database's
    // user, host, port and name). The failing requests log it in full.
    storeCheck = `unreachable: ${isQuarryError(error) ? error.code : (error as Error).message === timeoutMessage ? timeoutMessage : 'INTERNAL'}`;
  } finally {
    clearTimeout(timer);
  }
  const schema =
    store.info().schemaVersion === expected ? 'current' : `version ${store.info().schemaVersion}, expected ${expected}`;
  const runnerCheck = !runner ? 'none' : runner.running ? 'running' : 'stopped';
  return {
    ready: storeCheck === 'ok' && schema === 'current' && runnerCheck !== 'stopped',
    checks: { store: storeCheck, schema, runner: runnerCheck },
  };
}

/**
 * The HTTP application: REST and SSE under /api, the OpenAI-compatible endpoints under /v1, MCP at
 * /mcp, the web UI at /. Every request passes the request guard (Host, Origin, JSON bodies); /api,
 * /v1 and /mcp need a user (a token, or the local user on a loopback server without users).
 */
export function createApp(dependencies: ServerDependencies, options: { webRoot?: string } = {}) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: throwValidationError });
  app.onError((error, c) => errorToResponse(error, c, dependencies.log));
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    // A path that exists for other methods: 405 with the methods it has, never a 404 that says it does not.
    const allowed = allowedMethods(app.routes, path);
    if (allowed.length > 0)
      return c.json(
        errorBody('METHOD_NOT_ALLOWED', `${c.req.method} is not allowed on ${path}; it takes ${allowed.join(', ')}.`),
        405,
        { allow: allowed.join(', ') },
      );
    return c.json(errorBody('NOT_FOUND', `No route ${c.req.method} ${path}. See /api/openapi.json.`), 404);
  });
  // Every answer, errors and streams included: never sniffed, never framed, no referrer; API answers
  // are never stored by a cache (they are a user's own data).
  app.use('*', async (c, next) => {
    await next();
    c.header('x-content-type-options', 'nosniff');
    c.header('x-frame-options', 'DENY');
    c.header('referrer-policy', 'no-referrer');
    if (isApiPath(c.req.path) && !c.res.headers.has('cache-control')) c.header('cache-control', 'no-store');
  });
  app.use(
    '*',
    refuseOverLimit(() => Math.round(reconnectDelayMs() / 1000)),
  );
  app.use('/api/sessions/import', tooLarge(dependencies.config.server.importBytes));
  app.use('/v1/*', tooLarge(4 * 1024 * 1024));
  app.use('/mcp', tooLarge(4 * 1024 * 1024));
  // Library uploads are streamed to disk, each file capped as it arrives (`library-routes.ts`).
  app.use('/api/documents', tooLarge(FILES_PER_REQUEST * LIBRARY_FILE_BYTES + 1024 * 1024));
  app.use('/api/*', async (c, next) =>
    c.req.path === '/api/sessions/import' || c.req.path === '/api/documents' ? next() : tooLarge(1024 * 1024)(c, next),
  );
  app.use('*', guardRequests(dependencies));
  // A server span per API request, continuing a caller's `traceparent`; a run it starts stores the
  // trace, so the worker that runs it continues it (no-op unless tracing is on). A read nobody traced
  // (a page or client polling a session) is recorded only when it failed or was slow: a poll every
  // few seconds would otherwise be a one-span root trace each.
  for (const path of ['/api/*', '/v1/*', '/mcp']) {
    app.use(path, async (c, next) => {
      const parent = traceContextOfHeaders(c.req.header());
      const read = c.req.method === 'GET' || c.req.method === 'HEAD';
      if (!read || continuesTrace(parent) || !tracingEnabled()) {
        return inSpan(
          `${c.req.method} ${path}`,
          { 'http.request.method': c.req.method },
          async (span) => {
            await next();
            // The route's template, never the path itself (ids, and a share link's token, stay out of traces).
            span.updateName(`${c.req.method} ${c.req.routePath}`);
            span.setAttributes({ 'http.route': c.req.routePath, 'http.response.status_code': c.res.status });
          },
          { parent, kind: SpanKind.SERVER },
        );
      }
      const start = new Date();
      let failure: unknown;
      try {
        await next();
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        const status = failure === undefined ? c.res.status : 500;
        if (failure !== undefined || status >= 500 || Date.now() - start.getTime() >= SLOW_READ_MS)
          recordSpan(
            `${c.req.method} ${c.req.routePath}`,
            start,
            {
              'http.request.method': c.req.method,
              'http.route': c.req.routePath,
              'http.response.status_code': status,
            },
            failure,
            SpanKind.SERVER,
          );
      }
    });
  }
  app.get('/healthz', (c) =>
    c.json({
      ok: true,
      version: QUARRY_VERSION,
      store: dependencies.store.info().backend,
      runner: Boolean(dependencies.runner),
    }),
  );
  app.get('/readyz', async (c) => {
    const ready = await readiness(dependencies);
    return c.json(ready, ready.ready ? 200 : 503);
  });
  const metrics = serverMetrics(dependencies);
  const { publicNames, publicUrl, metricsToken } = dependencies.config.server;
  const metricsPolicy = {
    token: metricsToken,
    publicNames: new Set([...publicNames, ...(publicUrl ? [new URL(publicUrl).host] : [])].map(hostName)),
  };
  app.get('/metrics', async (c) => {
    const refusal = metricsRefusal(
      { authorization: c.req.header('authorization'), headers: c.req.raw.headers, peer: localRequest(c).peer },
      metricsPolicy,
    );
    if (refusal)
      return c.json(errorBody(refusal.status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN', refusal.message), refusal.status, {
        ...(refusal.status === 401 ? { 'www-authenticate': 'Bearer realm="metrics"' } : {}),
      });
    return c.body(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType });
  });
  registerPlainRoutes(app.openAPIRegistry);
  // Generated at the first request, when every route and component is registered, and kept:
  // generating it took about 15 ms, on every request. Its server is filled in per request.
  let generated: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  app.get('/api/openapi.json', (c) => {
    generated ??= app.getOpenAPI31Document({ openapi: '3.1.0', info: documentInfo });
    return c.json(completeDocument(generated, publicOrigin(dependencies, c.req.url)));
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'Required on servers with users (quarry users add); the web UI signs in with a cookie instead.',
  });
  // OAuth protected-resource metadata (RFC 9728) for remote MCP clients: the resource is /mcp, a
  // bearer token in the Authorization header (quarry users token add), no authorization server.
  const protectedResource = (c: Context<AppEnv>) => {
    const origin = publicOrigin(dependencies, c.req.url);
    return c.json({
      resource: `${origin}/mcp`,
      resource_name: 'Quarry',
      bearer_methods_supported: ['header'],
      resource_documentation: `${origin}/api/openapi.json`,
    });
  };
  app.get('/.well-known/oauth-protected-resource', protectedResource);
  app.get('/.well-known/oauth-protected-resource/mcp', protectedResource);
  app.route('/api/auth', publicAccountRoutes(dependencies));
  const streams = limitStreams(dependencies.config.server.limits.streams, metrics.streamOpened);
  for (const path of ['/api/*', '/v1/*', '/mcp']) app.use(path, authenticate(dependencies), streams);
  const api = app
    .route('/api/auth', accountRoutes(dependencies))
    .route('/api/capabilities', capabilityRoutes(dependencies))
    .route('/api/documents', libraryRoutes(dependencies))
    // The live routes first: `/feed` must not be read as a session id.
    .route('/api/sessions', liveRoutes(dependencies))
    .route('/api/sessions', sessionRoutes({ publicUrl: dependencies.config.server.publicUrl }));
  app.route('/v1', openAiRoutes(dependencies));
  app.route('/v1', responsesRoutes(dependencies));
  app.all('/mcp', mcpHandler);

  // A read-only share link: the report as its HTML export, for anyone holding the link, no sign-in.
  app.get('/share/:token', async (c) => {
    // `?version=n`: one report version of the shared session (each is its own document).
    const asked = c.req.query('version');
    const version = asked !== undefined && /^[1-9]\d{0,5}$/.test(asked) ? Number(asked) : undefined;
    if (asked !== undefined && version === undefined)
      return c.text('version must be a report version number (1, 2…).', 400, { 'cache-control': 'no-store' });
    const page = await sharedReport(dependencies.store, c.req.param('token'), version).catch((error: unknown) => {
      if (isQuarryError(error) && error.code === 'CONFLICT') return 'no report' as const;
      if (isQuarryError(error) && error.code === 'NOT_FOUND') return null;
      throw error;
    });
    const headers = { 'content-security-policy': EXPORT_CONTENT_SECURITY_POLICY, 'cache-control': 'no-store' };
    if (page === null)
      return c.text('This link does not open anything: it was never made, or it was revoked.', 404, headers);
    if (page === 'no report')
      return c.text('This research has no report yet. Open the link again once it has one.', 409, headers);
    return c.body(page.body as string, 200, { ...headers, 'content-type': page.contentType });
  });

  if (options.webRoot && existsSync(options.webRoot)) {
    const root = options.webRoot;
    app.use('*', async (c, next) => {
      if (isApiPath(c.req.path)) return next();
      await next();
      c.header('content-security-policy', WEB_CONTENT_SECURITY_POLICY);
      // Hashed asset names never change content: cache them for a year; the page itself, never.
      c.header('cache-control', c.req.path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    });
    app.use('/assets/*', compress());
    app.use('/assets/*', serveStatic({ root }));
    app.get('/favicon.svg', serveStatic({ root }));
    // Client-side routes (/sessions/:id, /sign-in) get the app's page; a file the app does not have
    // (/favicon.ico, /robots.txt) is not found, never the page.
    app.get('*', async (c, next) => {
      if (isApiPath(c.req.path)) return next();
      if (/\.[a-z0-9]+$/i.test(c.req.path)) return c.text('Not found', 404);
      return serveStatic({ root, path: 'index.html' })(c, next);
    });
  }
  return api;
}

/**
 * The methods the app's routes take on a path (middleware aside), HEAD wherever GET is: what a 405
 * says is allowed.
 */
function allowedMethods(routes: readonly { method: string; path: string }[], path: string): string[] {
  const methods = new Set<string>();
  for (const route of routes) {
    if (route.method === 'ALL') continue;
    const pattern = new RegExp(
      `^${route.path
        .split('/')
        .map((part) =>
          part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
        )
        .join('/')}/?$`,
    );
    if (pattern.test(path)) methods.add(route.method);
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}

/** The API's routes for Hono's typed client (`hc<QuarryApp>`), which the web UI uses. */
export type QuarryApp = ReturnType<typeof createApp>;
/** Signing in and out, under `/api/auth`: routed before authentication, so not part of `QuarryApp`. */
export type QuarrySignIn = ReturnType<typeof publicAccountRoutes>;
