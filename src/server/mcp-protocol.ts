import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/** MCP's code for a resource that does not exist (the SDK answers -32602 for an unknown URI). */
export const RESOURCE_NOT_FOUND = -32002;

export function resourceNotFound(uri: string): McpError {
  return new McpError(RESOURCE_NOT_FOUND, 'Resource not found', { uri });
}

type Handler = (request: { params?: Record<string, unknown> }, extra: unknown) => Promise<unknown>;

/**
 * Where the SDK (pinned, 1.32) departs from the 2025-11-25 specification, the server answers as the
 * specification says, in this one place:
 * - a tool whose `taskSupport` is `forbidden` (the default) called as a task, or a `required` one
 *   called plainly, is refused with -32601 before anything starts (the SDK runs the former anyway);
 * - reading an unknown resource is -32002 (the SDK answers -32602).
 * It wraps the low-level server's request handlers, so it runs after every tool and resource is
 * registered.
 */
export function answerAsTheSpecSays(
  server: McpServer,
  taskSupport: Record<string, 'forbidden' | 'optional' | 'required'>,
): void {
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  const callTool = handlers.get('tools/call');
  if (callTool)
    handlers.set('tools/call', async (request, extra) => {
      const name = String(request.params?.name ?? '');
      const support = taskSupport[name] ?? 'forbidden';
      const asTask = Boolean(request.params?.task);
      if (asTask && support === 'forbidden')
        throw new McpError(ErrorCode.MethodNotFound, `Tool ${name} cannot be called as a task; call it plainly.`);
      if (!asTask && support === 'required')
        throw new McpError(ErrorCode.MethodNotFound, `Tool ${name} must be called as a task.`);
      return callTool(request, extra);
    });
  const readResource = handlers.get('resources/read');
  if (readResource)
    handlers.set('resources/read', async (request, extra) => {
      try {
        return await readResource(request, extra);
      } catch (error) {
        if (error instanceof McpError && error.code === ErrorCode.InvalidParams && /not found/i.test(error.message))
          throw resourceNotFound(String(request.params?.uri ?? ''));
        throw error;
      }
    });
}
