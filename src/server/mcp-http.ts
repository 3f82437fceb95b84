import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Context } from 'hono';
import { connectMcpServer } from './mcp.ts';
import type { AppEnv } from './server-env.ts';

/**
 * MCP's Streamable HTTP transport at `/mcp`, stateless: each request gets a server for the
 * authenticated user's context, so any server process sharing the store can answer any request,
 * and nothing lives in memory between them (a research belongs to the runner, not the connection).
 */
export async function mcpHandler(c: Context<AppEnv>): Promise<Response> {
  // Stateless: no session to hold a server-to-client stream open for (GET), or to end (DELETE).
  if (c.req.method !== 'POST')
    return c.json(
      {
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; POST each request.' },
        id: null,
      },
      405,
      { allow: 'POST' },
    );
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: false,
  });
  const server = await connectMcpServer(c.get('context'), transport);
  // The request guard has read the body already: hand the transport what it parsed.
  const parsedBody = c.req.method === 'POST' ? await c.req.json().catch(() => undefined) : undefined;
  const response = await transport.handleRequest(c.req.raw, { parsedBody });
  // The response may still be streaming (progress, then the result): close once the client has it all.
  c.req.raw.signal.addEventListener('abort', () => void server.close(), { once: true });
  return response;
}
