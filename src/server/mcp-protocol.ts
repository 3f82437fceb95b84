import type { McpServer, RegisteredResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, isJSONRPCRequest, type JSONRPCRequest, McpError } from '@modelcontextprotocol/sdk/types.js';

/** MCP's code for a resource that does not exist (the SDK answers -32602 for an unknown URI). */
export const RESOURCE_NOT_FOUND = -32002;

export function resourceNotFound(uri: string): McpError {
  return new McpError(RESOURCE_NOT_FOUND, 'Resource not found', { uri });
}

/** What the server offers that the SDK would answer against the specification when asked wrongly. */
export interface SpecRules {
  /** Each tool's task support (a tool not named is `forbidden`, MCP's default). */
  taskSupport: Record<string, 'forbidden' | 'optional' | 'required'>;
  /** Every resource template the server reads. */
  resources: readonly RegisteredResourceTemplate[];
}

/**
 * The error the specification (2025-11-25) gives a request the SDK (pinned, 1.32) would answer
 * otherwise, or null for a request the SDK answers as it should:
 * - a tool whose `taskSupport` is `forbidden` called as a task, or a `required` one called plainly,
 *   is -32601 before anything starts (the SDK runs the former anyway);
 * - reading a URI no resource template matches is -32002 (the SDK answers -32602).
 */
function specError(request: JSONRPCRequest, rules: SpecRules): McpError | null {
  const params = request.params ?? {};
  if (request.method === 'tools/call') {
    const name = String(params.name ?? '');
    const support = rules.taskSupport[name] ?? 'forbidden';
    const asTask = Boolean(params.task);
    if (asTask && support === 'forbidden')
      return new McpError(ErrorCode.MethodNotFound, `Tool ${name} cannot be called as a task; call it plainly.`);
    if (!asTask && support === 'required')
      return new McpError(ErrorCode.MethodNotFound, `Tool ${name} must be called as a task.`);
  }
  if (request.method === 'resources/read' && typeof params.uri === 'string') {
    const uri = params.uri;
    if (!rules.resources.some((resource) => resource.resourceTemplate.uriTemplate.match(uri)))
      return resourceNotFound(uri);
  }
  return null;
}

/**
 * Connects `server` to `transport`, answering as the specification says where the SDK does not (see
 * `specError`). Through the transport's public interface: such a request is answered on the
 * transport and never reaches the SDK.
 */
export async function connectAsTheSpecSays(server: McpServer, transport: Transport, rules: SpecRules): Promise<void> {
  await server.connect(transport);
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const error = isJSONRPCRequest(message) ? specError(message, rules) : null;
    if (!error || !isJSONRPCRequest(message)) return deliver?.(message, extra);
    void transport.send(
      {
        jsonrpc: '2.0',
        id: message.id,
        error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) },
      },
      { relatedRequestId: message.id },
    );
  };
}
