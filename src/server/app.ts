import { existsSync } from 'node:fs';
import { Hono } from 'hono';
import { serveStatic } from '@hono/node-server/serve-static';
import { configuredWebProviders } from '../providers/search/create-search-providers.ts';
import { authenticate } from './auth.ts';
import { errorBody, errorToResponse } from './error-to-response.ts';
import { openAiRoutes } from './openai-compatible.ts';
import { openApiDocument } from './openapi.ts';
import { sessionRoutes } from './routes/sessions.ts';
import type { AppEnv, ServerDependencies } from './server-env.ts';

/** The HTTP application: REST and SSE under /api, the OpenAI-compatible endpoint under /v1, the web UI at /. */
export function createApp(dependencies: ServerDependencies, options: { webRoot?: string } = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError((error, c) => errorToResponse(error, c));
  app.notFound((c) => c.json(errorBody('NOT_FOUND', `No route ${c.req.method} ${new URL(c.req.url).pathname}. See /api/openapi.json.`), 404));

  app.get('/healthz', (c) => c.json({ ok: true, store: dependencies.store.info().backend, runner: Boolean(dependencies.runner) }));
  app.get('/api/openapi.json', (c) => c.json(openApiDocument()));

  app.use('/api/*', authenticate(dependencies));
  app.use('/v1/*', authenticate(dependencies));

  app.get('/api/capabilities', (c) => {
    const model = dependencies.env.QUARRY_MODEL ?? null;
    return c.json({
      analyst: model ? { kind: 'llm', model } : { kind: 'extractive', model: null },
      searchProviders: configuredWebProviders(dependencies.env),
      defaultDocs: dependencies.defaults.docs,
      defaultSearch: dependencies.defaults.search,
      runner: Boolean(dependencies.runner),
      limits: { maxIterations: 10, maxQueriesPerIteration: 8, maxSourcesPerQuery: 10, bodyBytes: 1024 * 1024 },
    });
  });
  app.route('/api/sessions', sessionRoutes(dependencies));
  app.route('/v1', openAiRoutes(dependencies));

  if (options.webRoot && existsSync(options.webRoot)) {
    app.use('/*', serveStatic({ root: options.webRoot }));
    // Client-side routes (/sessions/:id) get the app's index page.
    app.get('/*', serveStatic({ root: options.webRoot, path: 'index.html' }));
  }
  return app;
}
