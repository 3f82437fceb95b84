import {
  type McpServer,
  type RegisteredResourceTemplate,
  ResourceTemplate,
} from '@modelcontextprotocol/sdk/server/mcp.js';
import { listSessions } from '../service/list-sessions.ts';
import type { ServiceContext } from '../service/service-context.ts';
import { showSession } from '../service/session-queries.ts';
import { isQuarryError } from '../shared/errors.ts';
import { resourceNotFound } from './mcp-protocol.ts';

/**
 * A session's report (the latest, or a version), conversation and sources as MCP resources, listed
 * from the user's newest sessions; another user's session, like an unknown one, is "not found".
 * Returns the templates, which are every URI the server reads.
 */
export function registerSessionResources(server: McpServer, context: ServiceContext): RegisteredResourceTemplate[] {
  const resources: RegisteredResourceTemplate[] = [];
  const listAll = async () => {
    const page = await listSessions(context, { limit: 50 });
    return page.sessions;
  };
  // Session ids complete from the user's newest sessions.
  const complete = {
    sessionId: async (prefix: string) =>
      (await listAll()).map((session) => session.id).filter((id) => id.startsWith(prefix)),
  };
  /** A session's view for a resource, or "resource not found" for a session this user does not have. */
  const viewFor = async (uri: URL, id: unknown) => {
    try {
      return await showSession(context, String(id));
    } catch (error) {
      if (isQuarryError(error, 'SESSION_NOT_FOUND') || isQuarryError(error, 'INVALID_INPUT'))
        throw resourceNotFound(uri.href);
      throw error;
    }
  };
  const listed = (suffix: string, name: string, mimeType: string) => async () => ({
    resources: (await listAll()).map((session) => ({
      uri: `quarry://sessions/${session.id}/${suffix}`,
      name: `${session.title} — ${name}`,
      mimeType,
    })),
  });
  resources.push(
    server.registerResource(
      'report',
      new ResourceTemplate('quarry://sessions/{sessionId}/report', {
        complete,
        list: listed('report', 'report', 'text/markdown'),
      }),
      {
        title: 'A session’s report',
        description: 'The latest report of a research session',
        mimeType: 'text/markdown',
      },
      async (uri, { sessionId: id }) => {
        const view = await viewFor(uri, id);
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: view.reports.at(-1)?.report ?? '' }] };
      },
    ),
  );
  resources.push(
    server.registerResource(
      'report-version',
      new ResourceTemplate('quarry://sessions/{sessionId}/reports/{version}', { complete, list: undefined }),
      {
        title: 'One version of a session’s report',
        description:
          'A report version of a research session (1 is the first; a follow-up that researched further wrote the next)',
        mimeType: 'text/markdown',
      },
      async (uri, { sessionId: id, version }) => {
        const view = await viewFor(uri, id);
        const report = view.reports[Number(version) - 1];
        if (!report) throw resourceNotFound(uri.href);
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: report.report }] };
      },
    ),
  );
  resources.push(
    server.registerResource(
      'conversation',
      new ResourceTemplate('quarry://sessions/{sessionId}/conversation', {
        complete,
        list: listed('conversation', 'conversation', 'text/markdown'),
      }),
      {
        title: 'A session’s conversation',
        description: 'The questions and answers of a research session, follow-ups included',
        mimeType: 'text/markdown',
      },
      async (uri, { sessionId: id }) => {
        const view = await viewFor(uri, id);
        const text = view.messages
          .filter((message) => message.role !== 'system')
          .map((message) => `## ${message.role === 'user' ? 'Question' : 'Answer'}\n\n${message.content}`)
          .join('\n\n');
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text }] };
      },
    ),
  );
  resources.push(
    server.registerResource(
      'sources',
      new ResourceTemplate('quarry://sessions/{sessionId}/sources', {
        complete,
        list: listed('sources', 'sources', 'application/json'),
      }),
      {
        title: 'A session’s sources',
        description: 'The sources a research session found',
        mimeType: 'application/json',
      },
      async (uri, { sessionId: id }) => {
        const view = await viewFor(uri, id);
        const sources = view.sources.map((source) => ({
          citation: source.citation,
          title: source.title,
          url: source.url,
        }));
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(sources, null, 2) }] };
      },
    ),
  );
  return resources;
}
