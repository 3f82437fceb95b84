import { basename, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ErrorInfo, invalidInput, QuarryError } from '../shared/errors.ts';
import { isRunEnd, type StoredEvent } from '../shared/events.ts';
import type { Message, Session } from '../store/store.ts';
import type { ChatTurn } from './chat-conversation.ts';
import { isOutageStop } from './outage-watch.ts';
import { pendingQuestion } from './outline-question.ts';
import type { ServiceContext } from './service-context.ts';
import { queueResume, stopSession } from './session-control.ts';
import { deleteSession } from './session-queries.ts';
import { askSession, type RunClient, startResearch } from './start-research.ts';
import { sessionAdmission } from './user-limits.ts';

/**
 * A response, in the sense of the OpenAI Responses API: one turn of a session — a new research, a
 * follow-up, or an answer to an outline review. It is named by where the session stood when the
 * turn began (its last event offset and message count), so everything about it is read from the
 * session's own journal, events, messages and runs (what the request said that research does not
 * use, such as `metadata`, is kept in the input of the run it started), and a response reads the
 * same from any server sharing the store.
 */
export interface ResponseHandle {
  sessionId: string;
  /** The session's last event offset before the turn: the response's events are those after it. */
  after: number;
  /** How many messages the session held before the turn: its input and output are those after. */
  messages: number;
}

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'incomplete';

/** What a response came to, as far as it has come. */
export interface ResponseState {
  handle: ResponseHandle;
  session: Session;
  status: ResponseStatus;
  /** Milliseconds since the epoch: when the turn's first event was written. */
  createdAt: number;
  /** The answer once there is one: the report, the follow-up's answer, or the outline to review. */
  text: string | null;
  /**
   * Sources by their citation number, for the `[n]` markers in `text`: a web page by its URL, a local
   * document by its path inside the session's document folder (never a path on the server).
   */
  citations: Map<number, { url: string; title: string }>;
  error: ErrorInfo | null;
  /** The user messages this turn added. */
  input: Message[];
  /** The event that ended the turn, or null while it runs. */
  ended: StoredEvent | null;
  /** Tokens the turn's model calls used (every attempt), once it has ended; null while it runs. */
  usage: { inputTokens: number; outputTokens: number } | null;
  /** What the request that made the turn said about it (kept with its run; empty for a "continue"). */
  client: RunClient;
}

const ID = /^resp_(\d{1,15})_(\d{1,15})_([A-Za-z0-9_-]{1,100})$/;

export function responseId(handle: ResponseHandle): string {
  return `resp_${handle.after}_${handle.messages}_${handle.sessionId}`;
}

/** The handle a response id names; an id Quarry never made is simply not found. */
export function parseResponseId(id: string): ResponseHandle {
  const match = ID.exec(id);
  if (!match) throw noResponse(id);
  return { after: Number(match[1]), messages: Number(match[2]), sessionId: match[3]! };
}

function noResponse(id: string): QuarryError {
  return new QuarryError('NOT_FOUND', `No response ${id}.`, { details: { responseId: id } });
}

export interface CreateResponseRequest {
  /** The conversation as the client sends it; its last user message is the turn's question. */
  input: ChatTurn[];
  /** The system instruction of a new research (`instructions`). */
  instructions?: string;
  /** Continue the session of this response: a follow-up, an outline review's answer, or "continue". */
  previousResponseId?: string;
  metadata?: Record<string, string>;
  background?: boolean;
  /** Sampling temperature of a research this request starts. */
  temperature?: number;
}

/**
 * Starts a turn: without a previous response, a new research (earlier messages of the input and the
 * instructions become its system instruction); with one, the next turn of that response's session.
 */
export async function createResponse(context: ServiceContext, request: CreateResponseRequest): Promise<ResponseHandle> {
  const turns = request.input.filter((turn) => turn.text.trim() && (turn.role === 'user' || turn.role === 'assistant'));
  const question = turns.findLast((turn) => turn.role === 'user');
  if (!question) throw invalidInput('input', 'must contain a user message');
  const system = [
    request.instructions ?? '',
    ...request.input.filter((turn) => turn.role === 'system' || turn.role === 'developer').map((turn) => turn.text),
  ]
    .filter((text) => text.trim())
    .join('\n');
  const client: RunClient = {
    metadata: request.metadata ?? {},
    background: request.background ?? false,
    ...(request.previousResponseId ? { previousResponseId: request.previousResponseId } : {}),
  };
  if (!request.previousResponseId) {
    const earlier = turns
      .slice(0, turns.lastIndexOf(question))
      .map((turn) => `${turn.role === 'user' ? 'User' : 'Assistant'}: ${turn.text}`)
      .join('\n\n');
    const instruction = [system, earlier && `The conversation so far:\n${earlier}`].filter(Boolean).join('\n\n');
    const settings = {
      ...(instruction ? { systemInstruction: instruction.slice(-4000) } : {}),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    };
    const { session } = await startResearch(context, {
      question: question.text,
      settings: Object.keys(settings).length ? settings : undefined,
      client,
    });
    return { sessionId: session.id, after: 0, messages: 0 };
  }
  const previous = parseResponseId(request.previousResponseId);
  const session = await branchAt(context, previous);
  const handle = {
    sessionId: session.id,
    after: session.lastEventOffset,
    messages: (await context.store.listMessages(session.id)).length,
  };
  if (/^continue$/i.test(question.text.trim()) && ['interrupted', 'failed'].includes(session.status))
    await queueResume(context, { sessionId: session.id });
  else
    await askSession(context, {
      sessionId: session.id,
      text: question.text,
      client: { ...client, ...(request.instructions ? { instructions: request.instructions } : {}) },
    });
  return handle;
}

/**
 * The session a turn after `previous` continues: its own when `previous` is its latest turn, else a
 * branch (a fork of the session through the run that answered `previous`), so the turns that
 * followed it stay as they were.
 */
async function branchAt(context: ServiceContext, previous: ResponseHandle): Promise<Session> {
  const session = await context.store.getSession(previous.sessionId);
  const messages = await context.store.listMessages(session.id);
  const turn = messages.filter((message) => message.seq > previous.messages);
  const question = turn.find((message) => message.role === 'user');
  const later = question && turn.some((message) => message.role === 'user' && message.seq > question.seq);
  if (!later) return session;
  const answer = turn.find((message) => message.role === 'assistant' && message.seq > question.seq);
  const runId = answer?.runId ?? question.runId;
  const run = (await context.store.listRuns(session.id)).find((each) => each.id === runId);
  if (!run)
    throw new QuarryError('CONFLICT', `The turn ${responseId(previous)} has no run to branch from.`, {
      details: { responseId: responseId(previous) },
    });
  return context.store.forkSession({
    sessionId: session.id,
    throughRun: run.number,
    title: session.title,
    admission: sessionAdmission(context),
  });
}

/** The event that ends a turn: a run's end (not a hand-over to another worker) or its error. */
export function endsTurn(event: StoredEvent): boolean {
  return isRunEnd(event);
}

/** What a turn that ended with `ended` answers, given the messages it added. */
function answerOf(ended: StoredEvent, added: Message[], events: StoredEvent[]): string | null {
  if (ended.type === 'run-end' && ended.data.status === 'waiting') {
    const request = events.findLast((event) => event.type === 'input-request');
    return pendingQuestion(request?.type === 'input-request' ? request.data.payload : undefined);
  }
  if (ended.type === 'run-end' && ended.data.status === 'completed')
    return added.find((message) => message.role === 'assistant')?.content ?? '';
  return null;
}

function statusOf(ended: StoredEvent | null, session: Session): ResponseStatus {
  if (ended?.type === 'run-error') return 'failed';
  // A run stopped because its client gave up waiting on an outage failed, with the outage as its error.
  if (ended?.type === 'run-end' && isOutageStop(ended.data.reason)) return 'failed';
  if (ended?.type === 'run-end') return ended.data.status === 'interrupted' ? 'cancelled' : 'completed';
  if (session.status === 'queued') return 'queued';
  // Running, or a run whose worker died: the next claim continues it.
  return 'in_progress';
}

/**
 * Where a cited source is, as a client may see it: a web page's URL; a local document's path inside
 * the document folder that holds it (`energy/tidal.md`), or its file name when no folder does.
 */
export function corpusLocation(url: string, folders: string[]): string {
  if (!url.startsWith('file:')) return url;
  const path = fileURLToPath(url);
  const folder = folders.map((each) => resolve(each)).find((each) => path.startsWith(each + sep));
  return (folder ? relative(folder, path) : basename(path)).split(sep).join('/');
}

/** The turn's events, up to the one that ended it. */
export async function turnEvents(context: ServiceContext, handle: ResponseHandle): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  let after = handle.after;
  for (;;) {
    const page = await context.store.readEvents(handle.sessionId, { after, limit: 1000 });
    for (const event of page) {
      events.push(event);
      if (endsTurn(event)) return events;
    }
    if (page.length < 1000) return events;
    after = page.at(-1)!.offset;
  }
}

/** Where a response stands now, read from its session (another user's session is not found). */
export async function responseState(context: ServiceContext, handle: ResponseHandle): Promise<ResponseState> {
  const session = await context.store.getSession(handle.sessionId);
  if (handle.after > session.lastEventOffset) throw noResponse(responseId(handle));
  const [events, messages, sources] = await Promise.all([
    turnEvents(context, handle),
    context.store.listMessages(session.id),
    context.store.listSources(session.id),
  ]);
  const ended = events.find(endsTurn) ?? null;
  const added = messages.filter((message) => message.seq > handle.messages);
  // The turn's own input: the first question added after it began, unless that question belongs to
  // a run this turn did not run. A turn that answered clarifying questions or a review continued
  // its run and added no question: the next turn's is not its input. A queued turn has run nothing yet.
  const runs = new Set(events.flatMap((event) => (event.type === 'run-start' ? [event.data.runId] : [])));
  const input = added
    .filter((message) => message.role === 'user')
    .slice(0, 1)
    .filter((message) => runs.size === 0 || (message.runId !== null && runs.has(message.runId)));
  const folders = (Array.isArray(session.settings.docs) ? session.settings.docs : []).map(String);
  const citations = new Map(
    sources.flatMap((source) =>
      source.citation === null
        ? []
        : [[source.citation, { url: corpusLocation(source.url, folders), title: source.title }] as const],
    ),
  );
  return {
    handle,
    session,
    status: statusOf(ended, session),
    createdAt: events[0]?.createdAt ?? session.createdAt,
    text: ended ? answerOf(ended, added, events) : null,
    citations,
    error:
      ended?.type === 'run-error'
        ? ended.data
        : ended?.type === 'run-end' && isOutageStop(ended.data.reason)
          ? { code: 'STEP_FAILED' as const, message: ended.data.reason! }
          : null,
    input,
    ended,
    usage: ended ? await turnUsage(context, session.id, events) : null,
    client: await turnClient(context, input, messages.slice(0, handle.messages)),
  };
}

/**
 * What the request that made the turn said, from the run its question started; nothing when the turn
 * started no run (an answer to an outline review belongs to the run before it, a "continue" adds no message).
 */
async function turnClient(context: ServiceContext, input: Message[], before: Message[]): Promise<RunClient> {
  const runId = input[0]?.runId;
  if (!runId || before.some((message) => message.runId === runId)) return {};
  const run = (await context.store.listRuns(input[0]!.sessionId)).find((each) => each.id === runId);
  return (run?.input as { client?: RunClient } | null)?.client ?? {};
}

/** The tokens of the model steps journaled by the turn's run (zero for a run without a model). */
async function turnUsage(context: ServiceContext, sessionId: string, events: StoredEvent[]) {
  const runs = new Set(events.flatMap((event) => (event.type === 'run-start' ? [event.data.runId] : [])));
  const usage = { inputTokens: 0, outputTokens: 0 };
  for (const runId of runs) {
    // Superseded steps too: their tokens were spent.
    for (const step of await context.store.listSteps(sessionId, { runId, includeSuperseded: true })) {
      usage.inputTokens += step.usage?.inputTokens ?? 0;
      usage.outputTokens += step.usage?.outputTokens ?? 0;
    }
  }
  return usage;
}

/** Cancels a response that is still running (its session stops, resumable later); a finished one stays as it is. */
export async function cancelResponse(context: ServiceContext, handle: ResponseHandle): Promise<void> {
  const state = await responseState(context, handle);
  if (state.status === 'queued' || state.status === 'in_progress')
    await stopSession(context, { sessionId: handle.sessionId });
}

/**
 * Deletes a response: the session it belongs to, with every turn of it (a session's turns build on
 * each other, so one cannot go alone). A running session must be stopped first.
 */
export async function deleteResponse(context: ServiceContext, handle: ResponseHandle): Promise<void> {
  await responseState(context, handle);
  await deleteSession(context, { sessionId: handle.sessionId });
}
