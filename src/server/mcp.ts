import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { QUARRY_VERSION } from '../config/version.ts';
import type { Outline } from '../research/research-types.ts';
import { followEvents } from '../service/follow-events.ts';
import { listSessions } from '../service/list-sessions.ts';
import { outlineQuestion } from '../service/outline-question.ts';
import type { ServiceContext } from '../service/service-context.ts';
import { showSession } from '../service/session-queries.ts';
import { askSession, startResearch } from '../service/start-research.ts';
import { isQuarryError, toErrorInfo } from '../shared/errors.ts';
import { isRunEnd } from '../shared/events.ts';
import { sessionTaskStore, TASK_POLL_MS } from './mcp-tasks.ts';
import { progressNote } from './responses-wire.ts';

/** A tool's answer: a line of text for the model, and the same facts as structured content. */
function result(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/** Quarry's errors become tool errors the model can read (and act on); anything else is a protocol error. */
async function guarded(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    if (!isQuarryError(error)) throw error;
    const info = toErrorInfo(error);
    return { isError: true, content: [{ type: 'text', text: `${info.code}: ${info.message}` }] };
  }
}

/** Where a session stands, with its report or the question it waits on. */
async function describe(context: ServiceContext, sessionId: string) {
  const view = await showSession(context, sessionId);
  const report = view.reports.at(-1)?.report ?? null;
  const waitingFor =
    view.session.status === 'waiting' && view.pendingInput
      ? outlineQuestion((view.pendingInput.payload as { outline?: Outline } | null)?.outline)
      : null;
  return {
    sessionId: view.session.id,
    title: view.session.title,
    question: view.session.question,
    status: view.session.status,
    completedSteps: view.resumePoint.completedSteps,
    error: view.session.error?.message ?? null,
    waitingFor,
    report,
    sources: view.sources
      .filter((source) => source.citation !== null)
      .map((source) => ({ citation: source.citation, title: source.title, url: source.url })),
  };
}

function describeText(state: Awaited<ReturnType<typeof describe>>): string {
  const head = `Session ${state.sessionId} (${state.title}) is ${state.status}, ${state.completedSteps} steps done.`;
  if (state.error) return `${head}\nError: ${state.error}`;
  if (state.waitingFor) return `${head}\n\n${state.waitingFor}\n\nAnswer with ask_followup.`;
  return state.report ? `${head}\n\n${state.report}` : head;
}

/**
 * Quarry as an MCP server, for one user's service context: tools to start research, read where it
 * stands, ask follow-ups (or answer an outline review), search a session's sources and list
 * sessions; each session's report and sources as resources. Runs belong to the runner, never to the
 * MCP connection: a client that goes away leaves its research running, to be read later.
 */
export function createMcpServer(context: ServiceContext): McpServer {
  const server = new McpServer(
    { name: 'quarry', title: 'Quarry deep research', version: QUARRY_VERSION },
    {
      capabilities: { logging: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: sessionTaskStore(context),
      instructions:
        'Quarry researches a question over documents or the web and writes a cited report. Start with start_research; it returns a session id at once (or, with wait: true, the report, reporting progress). Read it with get_research; ask follow-ups with ask_followup. Clients that support tasks can call research as a task instead.',
    },
  );
  const sessionId = z.string().min(1).max(128).describe('The session id start_research returned');
  const question = z.string().min(1).max(20_000).describe('What to research');

  server.experimental.tasks.registerToolTask(
    'research',
    {
      title: 'Research (as a task)',
      description:
        'Researches a question and answers with the cited report. Called as an MCP task, it returns the task at once and the research runs on whatever happens to the connection (tasks/get, tasks/result, tasks/cancel); called plainly, it waits for the report.',
      inputSchema: { question },
      execution: { taskSupport: 'optional' },
    },
    {
      createTask: async ({ question: text }, extra) => {
        const { session } = await startResearch(context, { question: text });
        const handle = { sessionId: session.id, after: 0, messages: 0 };
        return {
          task: await extra.taskStore.createTask({ ttl: null, pollInterval: TASK_POLL_MS, context: { handle } }),
        };
      },
      getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
    },
  );

  server.registerTool(
    'start_research',
    {
      title: 'Start a research',
      description:
        'Starts researching a question and returns its session id at once. With wait: true, waits for the report instead, sending progress notifications as it searches and reads.',
      inputSchema: {
        question,
        wait: z.boolean().optional().describe('Wait for the report (default false: return at once)'),
      },
    },
    ({ question, wait }, extra) =>
      guarded(async () => {
        const { session } = await startResearch(context, { question });
        if (!wait)
          return result(`Started research session ${session.id}. Read it with get_research when it has finished.`, {
            sessionId: session.id,
            status: session.status,
          });
        const token = extra._meta?.progressToken;
        let progress = 0;
        for await (const event of followEvents(context.store, session.id, { signal: extra.signal })) {
          const note = progressNote(event);
          if (note && token !== undefined)
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: ++progress, message: note.trim() },
            });
          if (isRunEnd(event)) break;
        }
        const state = await describe(context, session.id);
        return result(describeText(state), state);
      }),
  );

  server.registerTool(
    'get_research',
    {
      title: 'Read a research',
      description: 'Where a research session stands: its status, its report once written, or the question it waits on.',
      inputSchema: { sessionId },
      annotations: { readOnlyHint: true },
    },
    ({ sessionId: id }) =>
      guarded(async () => {
        const state = await describe(context, id);
        return result(describeText(state), state);
      }),
  );

  server.registerTool(
    'ask_followup',
    {
      title: 'Ask a follow-up',
      description:
        'Asks a follow-up question about a finished research (answered from its sources, researching more where needed), or answers the outline review a session waits on ("approve", or what to change). Returns at once; read the answer with get_research.',
      inputSchema: { sessionId, text: z.string().min(1).max(20_000) },
    },
    ({ sessionId: id, text }) =>
      guarded(async () => {
        const asked = await askSession(context, { sessionId: id, text });
        return result(
          asked.kind === 'answer'
            ? `The answer to the outline review was ${asked.accepted ? 'accepted' : 'already given'}; the research goes on.`
            : 'The follow-up is being researched; read the answer with get_research.',
          { sessionId: id, kind: asked.kind },
        );
      }),
  );

  server.registerTool(
    'search_sources',
    {
      title: 'Search a session’s sources',
      description: 'The sources a session found whose title or address contains every word of the query.',
      inputSchema: { sessionId, query: z.string().max(500) },
      annotations: { readOnlyHint: true },
    },
    ({ sessionId: id, query }) =>
      guarded(async () => {
        const words = query.toLowerCase().split(/\s+/).filter(Boolean);
        const sources = (await context.store.listSources(id))
          .filter((source) => words.every((word) => `${source.title} ${source.url}`.toLowerCase().includes(word)))
          .map((source) => ({ citation: source.citation, title: source.title, url: source.url }));
        const lines = sources.map(
          (source) => `${source.citation ? `[${source.citation}] ` : ''}${source.title} — ${source.url}`,
        );
        return result(lines.join('\n') || 'No source matches.', { sources });
      }),
  );

  server.registerTool(
    'list_sessions',
    {
      title: 'List research sessions',
      description: 'Research sessions, newest first, optionally those whose title or question contains a text.',
      inputSchema: { query: z.string().max(500).optional(), limit: z.number().int().min(1).max(100).optional() },
      annotations: { readOnlyHint: true },
    },
    ({ query, limit }) =>
      guarded(async () => {
        const page = await listSessions(context, { search: query, limit: limit ?? 20 });
        const sessions = page.sessions.map((session) => ({
          sessionId: session.id,
          title: session.title,
          status: session.status,
          updatedAt: new Date(session.updatedAt).toISOString(),
        }));
        const lines = sessions.map((session) => `${session.sessionId} ${session.status} ${session.title}`);
        return result(lines.join('\n') || 'No sessions.', { sessions });
      }),
  );

  server.registerPrompt(
    'research',
    {
      title: 'Research a question',
      description: 'Asks the assistant to research a question with Quarry and answer from the cited report.',
      argsSchema: { question: z.string().min(1).max(20_000).describe('What to research') },
    },
    ({ question }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: `Research this with Quarry's start_research tool (wait: true), then answer from its report, keeping its [n] citations:\n\n${question}`,
          },
        },
      ],
    }),
  );

  const listAll = async () => {
    const page = await listSessions(context, { limit: 50 });
    return page.sessions;
  };
  // Session ids complete from the user's newest sessions.
  const complete = {
    sessionId: async (prefix: string) =>
      (await listAll()).map((session) => session.id).filter((id) => id.startsWith(prefix)),
  };
  server.registerResource(
    'report',
    new ResourceTemplate('quarry://sessions/{sessionId}/report', {
      complete,
      list: async () => ({
        resources: (await listAll()).map((session) => ({
          uri: `quarry://sessions/${session.id}/report`,
          name: `${session.title} — report`,
          mimeType: 'text/markdown',
        })),
      }),
    }),
    { title: 'A session’s report', description: 'The latest report of a research session', mimeType: 'text/markdown' },
    async (uri, { sessionId: id }) => {
      const view = await showSession(context, String(id));
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: view.reports.at(-1)?.report ?? '' }] };
    },
  );
  server.registerResource(
    'sources',
    new ResourceTemplate('quarry://sessions/{sessionId}/sources', {
      complete,
      list: async () => ({
        resources: (await listAll()).map((session) => ({
          uri: `quarry://sessions/${session.id}/sources`,
          name: `${session.title} — sources`,
          mimeType: 'application/json',
        })),
      }),
    }),
    { title: 'A session’s sources', description: 'The sources a research session found', mimeType: 'application/json' },
    async (uri, { sessionId: id }) => {
      const sources = (await context.store.listSources(String(id))).map((source) => ({
        citation: source.citation,
        title: source.title,
        url: source.url,
      }));
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(sources, null, 2) }] };
    },
  );
  return server;
}
