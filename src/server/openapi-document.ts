import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { QUARRY_VERSION } from '../config/version.ts';
import { TOKEN_COOKIE } from './auth.ts';

type Registry = OpenAPIHono['openAPIRegistry'];

const text = (description: string) => ({ description, content: { 'text/plain': { schema: z.string() } } });
const html = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } });
const json = (description: string) => ({
  description,
  content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
});

/**
 * The routes served outside the typed routers (probes, metrics, MCP, share pages, discovery), so the
 * document lists every route a client or an operator can call. `security: []` marks what answers
 * without a token.
 */
export function registerPlainRoutes(registry: Registry): void {
  const open = { security: [] as Record<string, string[]>[] };
  registry.registerPath({
    method: 'get',
    path: '/healthz',
    tags: ['operations'],
    summary: 'Liveness: the process answers (version, store backend, whether it runs sessions)',
    ...open,
    responses: { 200: json('Alive') },
  });
  registry.registerPath({
    method: 'get',
    path: '/readyz',
    tags: ['operations'],
    summary: 'Readiness: the store answers and the server takes work',
    ...open,
    responses: { 200: json('Ready'), 503: json('Not ready, with why') },
  });
  registry.registerPath({
    method: 'get',
    path: '/metrics',
    tags: ['operations'],
    summary: 'Prometheus metrics (text exposition format); answers during a store outage',
    ...open,
    responses: { 200: text('Metrics') },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/openapi.json',
    tags: ['operations'],
    summary: 'This document',
    ...open,
    responses: { 200: json('The OpenAPI 3.1 document') },
  });
  registry.registerPath({
    method: 'get',
    path: '/.well-known/oauth-protected-resource',
    tags: ['mcp'],
    summary: 'OAuth protected-resource metadata (RFC 9728) for remote MCP clients',
    ...open,
    responses: { 200: json('The resource (/mcp) and how to present a token') },
  });
  for (const method of ['post', 'get', 'delete'] as const)
    registry.registerPath({
      method,
      path: '/mcp',
      tags: ['mcp'],
      summary:
        method === 'post'
          ? 'MCP over Streamable HTTP: JSON-RPC requests (tools: research, get_research, ask_followup…; tasks)'
          : method === 'get'
            ? 'MCP over Streamable HTTP: the server-to-client event stream of a session'
            : 'MCP over Streamable HTTP: end a session',
      responses: {
        200: {
          description: 'A JSON-RPC response, or an SSE stream',
          content: {
            'application/json': { schema: z.record(z.string(), z.unknown()) },
            'text/event-stream': { schema: z.string() },
          },
        },
        401: json('No valid token on a server with users'),
      },
    });
  registry.registerPath({
    method: 'get',
    path: '/share/{token}',
    tags: ['sessions'],
    summary: 'A shared report, read-only, for anyone holding the link (quarry share)',
    ...open,
    request: {
      params: z.object({ token: z.string().openapi({ param: { name: 'token', in: 'path' } }) }),
      query: z.object({ version: z.string().optional().openapi({ description: 'A report version number' }) }),
    },
    responses: {
      200: html('The report as a self-contained page'),
      400: text('A version that is not a number'),
      404: text('No such link (never made, or revoked)'),
      409: text('The session has no report yet'),
    },
  });
}

/** `get /api/sessions/{id}/steps` → `getSessionsByIdSteps`: stable, unique, readable. */
function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/api\//, '/')
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(.+)\}$/.exec(segment)?.[1];
      const word = (param ? `by_${param}` : segment).replace(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) =>
        (next ?? '').toUpperCase(),
      );
      return word.charAt(0).toUpperCase() + word.slice(1);
    });
  return `${method}${words.join('')}`;
}

type Document = ReturnType<OpenAPIHono['getOpenAPI31Document']>;

/**
 * The generated document, completed: the server it is read from, the security every operation
 * needs (a bearer token or the web UI's cookie; none in loopback local mode), an operationId for
 * every operation, and the license.
 */
export function completeDocument(document: Document, origin: string): Document {
  const seen = new Set<string>();
  // Copies, never edits: the server keeps the generated document for every request.
  const paths: NonNullable<Document['paths']> = {};
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const completed = { ...item };
    for (const method of ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const) {
      const operation = item?.[method];
      if (!operation) continue;
      let id = operation.operationId ?? operationIdOf(method, path);
      while (seen.has(id)) id = `${id}_`;
      seen.add(id);
      completed[method] = { ...operation, operationId: id };
    }
    paths[path] = completed;
  }
  return {
    ...document,
    paths,
    info: { ...document.info, license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: origin }],
    security: [{ bearer: [] }, { cookie: [] }],
    components: {
      ...document.components,
      securitySchemes: {
        ...document.components?.securitySchemes,
        cookie: {
          type: 'apiKey',
          in: 'cookie',
          name: TOKEN_COOKIE,
          description: 'Set by POST /api/auth/session (the web UI signs in with it).',
        },
      },
    },
  };
}

export const documentInfo = {
  title: 'Quarry API',
  version: QUARRY_VERSION,
  description:
    'Deep research sessions that never lose their place. Errors are `{ "error": { "code", "message", "field"? } }`. Every operation needs a token (bearer, or the web UI\'s cookie) on a server with users; a loopback server without users (local mode) needs none.',
};
