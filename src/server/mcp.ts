import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { QUARRY_VERSION } from '../config/version.ts';
import { eventsWithin } from '../service/answer-stream.ts';
import { listSessions } from '../service/list-sessions.ts';
import { OutageWatch, outageStopReason } from '../service/outage-watch.ts';
import { pendingQuestion } from '../service/outline-question.ts';
import type { ServiceContext } from '../service/service-context.ts';
import { stopSession } from '../service/session-control.ts';
import { showSession } from '../service/session-queries.ts';
import { askSession, startResearch } from '../service/start-research.ts';
import { isQuarryError, QuarryError, toErrorInfo } from '../shared/errors.ts';
import { isRunEnd } from '../shared/events.ts';
import { reportDelivered } from './delivery-lag.ts';
import { connectAsTheSpecSays, type SpecRules } from './mcp-protocol.ts';
import { registerSessionResources } from './mcp-resources.ts';
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

const sourceShape = z.object({ citation: z.number().nullable(), title: z.string(), url: z.string() });
/** What get_research (and start_research with wait) answers with, as structured content. */
const researchState = {
  sessionId: z.string(),
  title: z.string(),
  question: z.string(),
  status: z.string(),
  completedSteps: z.number(),
  error: z.string().nullable(),
  waitingFor: z
    .string()
    .nullable()
    .describe('What the session waits on (its outline to review, or clarifying questions), answered with ask_followup'),
  report: z.string().nullable().describe('The report version asked for (the latest by default)'),
  reportVersion: z.number().nullable(),
  reportVersions: z.number(),
  answer: z
    .string()
    .nullable()
    .describe('The latest follow-up answer given in the conversation, if newer than the report'),
  sources: z.array(sourceShape),
};

/** Where a session stands: a report version (the latest by default), the latest answer, or the question it waits on. */
async function describe(context: ServiceContext, sessionId: string, version?: number) {
  const view = await showSession(context, sessionId);
  if (version !== undefined && !view.reports[version - 1])
    throw new QuarryError(
      'NOT_FOUND',
      `Session ${sessionId} has ${view.reports.length} report versions, not ${version}.`,
    );
  const chosen = version === undefined ? view.reports.at(-1) : view.reports[version - 1];
  const latest = view.messages.findLast((message) => message.role === 'assistant');
  const newest = view.reports.at(-1);
  // A follow-up answered in the conversation is newer than the report it came after.
  const answer =
    latest && latest.content !== newest?.report && latest.createdAt >= (newest?.createdAt ?? 0) ? latest.content : null;
  const waitingFor =
    view.session.status === 'waiting' && view.pendingInput ? pendingQuestion(view.pendingInput.payload) : null;
  return {
    sessionId: view.session.id,
    title: view.session.title,
    question: view.session.question,
    status: view.session.status,
    completedSteps: view.resumePoint.completedSteps,
    error: view.session.error?.message ?? null,
    waitingFor,
    report: chosen?.report ?? null,
    reportVersion: chosen?.version ?? null,
    reportVersions: view.reports.length,
    answer,
    sources: view.sources
      .filter((source) => source.citation !== null)
      .map((source) => ({ citation: source.citation, title: source.title, url: source.url })),
  };
}

function describeText(state: Awaited<ReturnType<typeof describe>>): string {
  const head = `Session ${state.sessionId} (${state.title}) is ${state.status}, ${state.completedSteps} steps done.`;
  if (state.error) return `${head}\nError: ${state.error}`;
  if (state.waitingFor) return `${head}\n\n${state.waitingFor}\n\nAnswer with ask_followup.`;
  const versions =
    state.reportVersions > 1 ? ` (report version ${state.reportVersion} of ${state.reportVersions})` : '';
  if (state.answer)
    return `${head}\n\nThe latest answer:\n\n${state.answer}${state.report ? `\n\nThe report${versions}:\n\n${state.report}` : ''}`;
  return state.report ? `${head}${versions}\n\n${state.report}` : head;
}

/**
 * Progress notifications until the session's run ends: first the session's id (a client cut off
 * while it waits can read it later), then each step of research in words and the report's text as
 * it is written (a line at a time); and a log message (`notifications/message`, at `info`) as each
 * phase starts and as the run ends.
 */
async function sendProgress(
  context: ServiceContext,
  sessionId: string,
  signal: AbortSignal,
  notify: (params: { progress: number; message: string }) => Promise<void>,
  log: (message: string) => Promise<void>,
): Promise<void> {
  let progress = 0;
  await notify({
    progress: ++progress,
    message: `Research session ${sessionId} started; read it with get_research if this call ends before it does.`,
  });
  // A client waiting on an outage longer than the bound: the run stops (resumable) and the waiting
  // call ends with the outage as its error (issue 45).
  const watch = new OutageWatch(context.config.server.outageWaitSeconds * 1000);
  for await (const event of eventsWithin(context, sessionId, { after: 0, signal, watch })) {
    if (event === 'overdue') {
      await stopSession(context, { sessionId, reason: outageStopReason(watch.current()!.cause) });
      continue;
    }
    watch.see(event);
    if (event.type === 'phase-start') await log(`Session ${sessionId}: ${event.data.phase} phase started`);
    if (isRunEnd(event))
      await log(`Session ${sessionId}: run ended (${event.type === 'run-end' ? event.data.status : 'failed'})`);
    const note = event.type === 'report-delta' ? (event.data.message ? event.data.text : null) : progressNote(event);
    if (note?.trim()) {
      await notify({ progress: ++progress, message: note.trim() });
      reportDelivered(event.createdAt);
    }
    if (isRunEnd(event)) return;
  }
}

/**
 * Log messages (`info`) to the client, on the stream of the call they are about (so a client over
 * HTTP hears them without opening another stream); one it cannot take is dropped.
 */
function logTo(extra: { sendNotification: (notification: ServerNotification) => Promise<void> }) {
  return (message: string) =>
    extra
      .sendNotification({ method: 'notifications/message', params: { level: 'info', logger: 'quarry', data: message } })
      .catch(() => undefined);
}

/**
 * Quarry as an MCP server, for one user's service context: tools to start research, read where it
 * stands, ask follow-ups (or answer an outline review), search a session's sources and list
 * sessions; each session's report and sources as resources. Runs belong to the runner, never to the
 * MCP connection: a client that goes away leaves its research running, to be read later.
 */
function buildMcpServer(context: ServiceContext): { server: McpServer; rules: SpecRules } {
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
      outputSchema: { sessionId: z.string(), status: z.string(), sources: z.array(sourceShape) },
      execution: { taskSupport: 'optional' },
    },
    {
      createTask: async ({ question: text }, extra) => {
        const { session } = await startResearch(context, { question: text });
        const handle = { sessionId: session.id, after: 0, messages: 0 };
        // A caller that asked for progress (a plain call waits here) hears it while the research runs.
        const token = extra._meta?.progressToken;
        if (token !== undefined)
          void sendProgress(
            context,
            session.id,
            extra.signal,
            (params) =>
              extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...params } }),
            logTo(extra),
          ).catch(() => undefined);
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
      // At once: the session id and status; with wait, where the research ended.
      outputSchema: z.object(researchState).partial().required({ sessionId: true, status: true }).shape,
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
        await sendProgress(
          context,
          session.id,
          extra.signal,
          (params) =>
            token === undefined
              ? Promise.resolve()
              : extra.sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken: token, ...params },
                }),
          logTo(extra),
        );
        const state = await describe(context, session.id);
        return result(describeText(state), state);
      }),
  );

  server.registerTool(
    'get_research',
    {
      title: 'Read a research',
      description:
        'Where a research session stands: its status, its report once written (the latest version, or the one asked for), the latest follow-up answer, or the question it waits on.',
      inputSchema: {
        sessionId,
        version: z.number().int().min(1).optional().describe('A report version (1 is the first); default the latest'),
      },
      outputSchema: researchState,
      annotations: { readOnlyHint: true },
    },
    ({ sessionId: id, version }) =>
      guarded(async () => {
        const state = await describe(context, id, version);
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
      outputSchema: { sessionId: z.string(), kind: z.string() },
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
      outputSchema: { sources: z.array(sourceShape) },
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
      outputSchema: {
        sessions: z.array(
          z.object({ sessionId: z.string(), title: z.string(), status: z.string(), updatedAt: z.string() }),
        ),
      },
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

  const resources = registerSessionResources(server, context);
  return { server, rules: { taskSupport: { research: 'optional' }, resources } };
}

/** A Quarry MCP server for this context, connected to `transport` (stdio, or one HTTP request). */
export async function connectMcpServer(context: ServiceContext, transport: Transport): Promise<McpServer> {
  const { server, rules } = buildMcpServer(context);
  await connectAsTheSpecSays(server, transport, rules);
  return server;
}
