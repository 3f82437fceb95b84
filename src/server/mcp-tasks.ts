import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { CallToolResult, Task } from '@modelcontextprotocol/sdk/types.js';
import {
  parseResponseId,
  type ResponseHandle,
  type ResponseState,
  type ResponseStatus,
  responseId,
  responseState,
} from '../service/responses.ts';
import type { ServiceContext } from '../service/service-context.ts';
import { stopSession } from '../service/session-control.ts';
import { isQuarryError } from '../shared/errors.ts';

/** How often a client should ask again while a research runs. */
export const TASK_POLL_MS = 2_000;

const TASK_STATUS: Record<ResponseStatus, Task['status']> = {
  queued: 'working',
  in_progress: 'working',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  incomplete: 'cancelled',
};

function asTask(state: ResponseState): Task {
  // Asked to stop, a running research is cancelled for the client at once (tasks/cancel answers
  // `cancelled`); its worker stops it at its next heartbeat.
  const stopping = state.session.stopRequested && TASK_STATUS[state.status] === 'working';
  const status = stopping ? 'cancelled' : TASK_STATUS[state.status];
  const statusMessage =
    state.error?.message ??
    (status === 'cancelled'
      ? `Stopped; start_research's session ${state.session.id} resumes with ask_followup "continue".`
      : undefined);
  return {
    taskId: responseId(state.handle),
    status,
    // Tasks live as long as their session: retention and deletion are the session's.
    ttl: null,
    createdAt: new Date(state.createdAt).toISOString(),
    lastUpdatedAt: new Date(state.session.updatedAt).toISOString(),
    pollInterval: TASK_POLL_MS,
    ...(statusMessage ? { statusMessage } : {}),
  };
}

/** The tool result of a finished turn: its answer (the cited report, or the outline to review) and its sources. */
export function taskResult(state: ResponseState): CallToolResult {
  const sources = [...state.citations].map(([citation, source]) => ({
    citation,
    title: source.title,
    url: source.url,
  }));
  const structured = { sessionId: state.session.id, status: state.session.status, sources };
  if (state.status === 'failed')
    return { isError: true, content: [{ type: 'text', text: state.error?.message ?? 'The research failed.' }] };
  const text = state.text ?? `The research of session ${state.session.id} was stopped before it answered.`;
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/** A task id Quarry never made, or another user's, is simply not found (the SDK says so to the client). */
async function stateOf(context: ServiceContext, taskId: string): Promise<ResponseState | null> {
  try {
    return await responseState(context, parseResponseId(taskId));
  } catch (error) {
    if (isQuarryError(error) && ['NOT_FOUND', 'SESSION_NOT_FOUND'].includes(error.code)) return null;
    throw error;
  }
}

/**
 * MCP tasks backed by the store, for one user: a task is a turn of a session, named like a
 * Responses API response (its session and where the session stood when the turn began), so its
 * status and result are read from the session's journal. Nothing lives in the server's memory:
 * any server sharing the store answers `tasks/get`, `tasks/result` and `tasks/cancel`, and a task
 * outlives the connection (and the process) that started it.
 */
export function sessionTaskStore(context: ServiceContext): TaskStore {
  return {
    async createTask(options: CreateTaskOptions): Promise<Task> {
      // The research was started by the tool; its handle comes in the options' context.
      const handle = options.context?.handle as ResponseHandle | undefined;
      if (!handle) throw new Error('A Quarry task is created by its tool, with the turn it names.');
      return asTask(await responseState(context, handle));
    },
    async getTask(taskId) {
      const state = await stateOf(context, taskId);
      return state ? asTask(state) : null;
    },
    async getTaskResult(taskId) {
      const state = await stateOf(context, taskId);
      if (!state) throw new Error(`Task not found: ${taskId}`);
      return taskResult(state);
    },
    // A turn's result is what its session recorded: there is nothing else to store.
    async storeTaskResult() {},
    async updateTaskStatus(taskId, status) {
      if (status !== 'cancelled') return;
      const state = await stateOf(context, taskId);
      if (state && TASK_STATUS[state.status] === 'working') await stopSession(context, { sessionId: state.session.id });
    },
    /** Each session's research (its first turn), newest first. */
    async listTasks(cursor) {
      const page = await context.store.listSessions({ limit: 50, ...(cursor ? { cursor } : {}) });
      const tasks = await Promise.all(
        page.sessions.map(async (session) =>
          asTask(await responseState(context, { sessionId: session.id, after: 0, messages: 0 })),
        ),
      );
      return { tasks, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
    },
  };
}
