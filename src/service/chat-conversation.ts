import { invalidInput, QuarryError } from '../shared/errors.ts';
import { isRunEnd, type StoredEvent } from '../shared/events.ts';
import type { Message, Session } from '../store/store.ts';
import { runBeginning } from './follow-events.ts';
import { pendingQuestion } from './outline-question.ts';
import type { ServiceContext } from './service-context.ts';
import { pendingInput, queueResume } from './session-control.ts';
import { askSession, startResearch } from './start-research.ts';

/** One message of a chat client's conversation, as text. */
export interface ChatTurn {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  text: string;
}

export interface ChatRequest {
  messages: ChatTurn[];
  /** `X-Quarry-Session-Id`: continue exactly this session. */
  sessionId?: string;
  /** The client's own conversation id (`chat_id`, or `metadata.chat_id`). */
  chatId?: string;
  /** Sampling temperature for a conversation this request starts (a session keeps the one it started with). */
  temperature?: number;
}

export interface ChatTurnResult {
  session: Session;
  /** Follow the session's events after this offset for the answer; null: nothing new, answer from what is stored. */
  after: number | null;
}

const conversational = (turn: { role: string }) => turn.role === 'user' || turn.role === 'assistant';
const same = (a: string, b: string) => a.trim() === b.trim();

/**
 * How well a session's stored conversation leads into the incoming one: 2 when it is a prefix of it
 * word for word, 1 when only its user turns are (the client edited an earlier assistant reply), 0
 * when it is not.
 */
function prefixMatch(stored: Message[], incoming: ChatTurn[]): 0 | 1 | 2 {
  if (stored.length > incoming.length) return 0;
  if (!stored.every((message, index) => message.role === incoming[index]!.role)) return 0;
  const userTurnsMatch = stored.every(
    (message, index) => message.role !== 'user' || same(message.content, incoming[index]!.text),
  );
  if (!userTurnsMatch) return 0;
  return stored.every((message, index) => same(message.content, incoming[index]!.text)) ? 2 : 1;
}

/**
 * The user's session whose stored conversation best leads into `incoming` (at least one exchange;
 * a waiting session's question to the person counts as its reply):
 * a word-for-word prefix before one whose assistant replies the client edited, the longer before
 * the shorter, the most recently updated among equals; null when none does.
 */
async function findByHistory(context: ServiceContext, incoming: ChatTurn[]): Promise<Session | null> {
  const first = incoming[0]!.text.trim();
  const page = await context.store.listSessions({ search: first.slice(0, 200), limit: 50 });
  let best: { session: Session; match: number; length: number } | null = null;
  for (const session of page.sessions) {
    if (session.question !== first) continue;
    const stored = (await context.store.listMessages(session.id)).filter(conversational);
    // A waiting session's last reply was what it asks (clarifying questions, an outline), never stored.
    const pending = session.status === 'waiting' ? await pendingInput(context, session) : null;
    if (pending) stored.push({ ...stored.at(-1)!, role: 'assistant', content: pendingQuestion(pending.input) });
    const match = stored.length < 2 ? 0 : prefixMatch(stored, incoming);
    if (match === 0) continue;
    if (!best || match > best.match || (match === best.match && stored.length > best.length))
      best = { session, match, length: stored.length };
  }
  return best?.session ?? null;
}

/**
 * The user's session a re-sent one-message conversation belongs to: the most recently updated one
 * that asked exactly this question with the same instructions, took no follow-up, and whose run has
 * not ended (a client that lost its connection and sends again). Once the run has ended, the same
 * message is a new research.
 */
async function findRunningTwin(
  context: ServiceContext,
  question: string,
  instruction: string,
): Promise<Session | null> {
  const page = await context.store.listSessions({ search: question.slice(0, 200), limit: 50 });
  for (const session of page.sessions) {
    if (session.question !== question || !['running', 'queued'].includes(session.status)) continue;
    if ((session.settings.systemInstruction ?? '') !== instruction) continue;
    const asked = (await context.store.listMessages(session.id)).filter((message) => message.role === 'user');
    if (asked.length <= 1) return session;
  }
  return null;
}

/**
 * Maps a chat client's request onto a session, per user: `X-Quarry-Session-Id`, else the client's
 * `chat_id` (kept as the session's external id), else the full history — a conversation continues a
 * session only when the session's stored conversation is a prefix of it, never by its first message
 * alone. A conversation of one question is a new chat unless the same question is still being
 * researched for this user (a re-sent request). The latest user turn then becomes a follow-up or
 * the answer to an outline review; a repeated conversation attaches to its session.
 */
export async function openChatTurn(context: ServiceContext, request: ChatRequest): Promise<ChatTurnResult> {
  const turns = request.messages.filter((turn) => conversational(turn) && turn.text.trim());
  if (!turns.some((turn) => turn.role === 'user')) throw invalidInput('messages', 'must contain a user message');
  const system = request.messages
    .filter((turn) => turn.role === 'system' || turn.role === 'developer')
    .map((turn) => turn.text)
    .join('\n')
    .trim();
  let session: Session | null = null;
  if (request.sessionId) session = await context.store.getSession(request.sessionId);
  else if (request.chatId) session = await context.store.findSessionByExternalId(`chat:${request.chatId}`);
  else if (turns.length > 1) session = await findByHistory(context, turns);
  else session = await findRunningTwin(context, turns[0]!.text.trim(), system.slice(-4000));
  if (!session) {
    const first = request.sessionId || request.chatId || turns.length === 1 ? turns[0]! : turns.at(-1)!;
    const earlier = first === turns[0] ? '' : conversationText(turns.slice(0, -1));
    const instruction = [system, earlier && `The conversation so far:\n${earlier}`].filter(Boolean).join('\n\n');
    const settings = {
      ...(instruction ? { systemInstruction: instruction.slice(-4000) } : {}),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    };
    const started = await startResearch(context, {
      question: first.text,
      settings: Object.keys(settings).length ? settings : undefined,
      externalId: request.chatId ? `chat:${request.chatId}` : undefined,
    });
    return { session: started.session, after: 0 };
  }
  const stored = (await context.store.listMessages(session.id)).filter(conversational);
  const asked = stored.filter((message) => message.role === 'user').length;
  const question = turns.findLast((turn) => turn.role === 'user')!;
  const busy = ['running', 'queued'].includes(session.status);
  if (turns.filter((turn) => turn.role === 'user').length <= asked) {
    // Nothing new: the same conversation again (a retry); answer with what the session says, or
    // follow the running run from its beginning (its text so far first).
    return { session, after: busy ? await runBeginning(context.store, session) : null };
  }
  if (busy) {
    throw new QuarryError(
      'SESSION_ALREADY_RUNNING',
      'Quarry is still working on the previous message of this conversation; send the new one when it has answered.',
      { details: { sessionId: session.id } },
    );
  }
  const after = session.lastEventOffset;
  if (/^continue$/i.test(question.text.trim()) && ['interrupted', 'failed'].includes(session.status)) {
    return { session: await queueResume(context, { sessionId: session.id }), after };
  }
  await askSession(context, { sessionId: session.id, text: question.text });
  return { session, after };
}

function conversationText(turns: ChatTurn[]): string {
  return turns.map((turn) => `${turn.role === 'user' ? 'User' : 'Assistant'}: ${turn.text}`).join('\n\n');
}

/** What the assistant says once the run ended the way `ended` says (null: as the session stands now). */
export async function chatReply(context: ServiceContext, session: Session, ended: StoredEvent | null): Promise<string> {
  const current = await context.store.getSession(session.id);
  if (ended?.type === 'run-error' || (!ended && current.status === 'failed')) {
    const message = ended?.type === 'run-error' ? ended.data.message : (current.error?.message ?? 'unknown error');
    return `The research failed: ${message}. Send "continue" to retry it.`;
  }
  if (current.status === 'waiting') {
    const pending = await pendingInput(context, current);
    return pendingQuestion(pending?.input);
  }
  if (current.status === 'interrupted')
    return 'The research was stopped. Send "continue" to resume it where it stopped.';
  const messages = await context.store.listMessages(current.id);
  return messages.findLast((message) => message.role === 'assistant')?.content ?? '';
}

export { isRunEnd };
