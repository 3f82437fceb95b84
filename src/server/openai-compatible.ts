import { createHash, randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { streamSSE } from 'hono/streaming';
import type { Outline } from '../research/research-types.ts';
import { followEvents } from '../service/follow-events.ts';
import { askSession, startResearch } from '../service/start-research.ts';
import { QuarryError, isQuarryError, invalidInput } from '../store/errors.ts';
import type { Session, StoredEvent } from '../store/store.ts';
import { chatCompletionBody } from './schemas.ts';
import type { AppEnv, ServerDependencies } from './server-env.ts';
import { parseBody } from './validate.ts';

const MODEL = 'quarry';
type ChatMessage = { role: string; content: string | { type: string; text?: string }[] | null };

function textOf(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  return (message.content ?? []).map((part) => part.text ?? '').join('');
}

/** A session id that a conversation always maps to: the same chat lands in the same session. */
function conversationId(ownerId: string, key: string): string {
  return `chat-${createHash('sha256').update(`${ownerId}\u0000${key}`).digest('hex').slice(0, 32)}`;
}

/** One progress line for a reasoning delta. */
function progressLine(event: StoredEvent): string | null {
  const data = (event.data ?? {}) as Record<string, unknown>;
  if (event.type === 'phase-start') return `\n[${data.phase}] `;
  if (event.type === 'step-end' && data.status === 'completed') return `${data.key} ✓ `;
  if (event.type === 'source-found') return `\nsource: ${data.title} `;
  return null;
}

/** What the assistant says when the run ends the way it did. */
async function finalText(dependencies: ServerDependencies, session: Session, ended: StoredEvent | null): Promise<string> {
  const data = (ended?.data ?? {}) as Record<string, unknown>;
  if (ended?.type === 'run-error') return `The research failed: ${data.message}. Send "continue" to retry it.`;
  if (data.status === 'waiting') {
    const events = await dependencies.store.readEvents(session.id, { after: Math.max(0, ended!.offset - 50) });
    const request = events.filter((event) => event.type === 'input-request').at(-1)?.data as { payload?: { outline?: Outline } } | undefined;
    const outline = request?.payload?.outline;
    const sections = outline ? outline.sections.map((section, index) => `${index + 1}. ${section.title}: ${section.focus}`).join('\n') : '';
    return `Here is the outline of the report:\n\n${sections}\n\nReply "approve" to write it, or say what to change.`;
  }
  if (data.status === 'interrupted') return 'The research was stopped. Send "continue" to resume it where it stopped.';
  const messages = await dependencies.store.listMessages(session.id);
  return messages.filter((message) => message.role === 'assistant').at(-1)?.content ?? '';
}

function isEnd(event: StoredEvent): boolean {
  const status = (event.data as { status?: string } | null)?.status;
  return event.type === 'run-error' || (event.type === 'run-end' && status !== 'queued');
}

/**
 * `POST /v1/chat/completions` and `GET /v1/models`: any chat client drives research. A conversation
 * maps to one session (`X-Quarry-Session-Id`, else `chat_id`, else a hash of the user and the first
 * message); a new user turn is a follow-up or the answer to an outline review; re-sending the same
 * conversation attaches to the session instead of starting again. Runs never depend on the client
 * staying connected.
 */
export function openAiRoutes(dependencies: ServerDependencies): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get('/models', (c) => c.json({ object: 'list', data: [{ id: MODEL, object: 'model', created: 1_700_000_000, owned_by: 'quarry' }] }));

  app.post('/chat/completions', bodyLimit({ maxSize: 4 * 1024 * 1024, onError: (c) => c.json({ error: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large.' } }, 413) }), async (c) => {
    const body = await parseBody(c, chatCompletionBody);
    const context = c.get('context');
    const userTurns = body.messages.filter((message) => message.role === 'user').map(textOf).filter((text) => text.trim());
    if (userTurns.length === 0) throw invalidInput('messages', 'must contain a user message');
    const header = c.req.header('x-quarry-session-id');
    const chatId = typeof body.metadata?.chat_id === 'string' ? body.metadata.chat_id : body.chat_id;
    const sessionId = header ?? conversationId(context.ownerId, chatId ? `chat:${chatId}` : `first:${body.user ?? ''}:${userTurns[0]}`);
    let session = await context.store.getSession(sessionId, { ownerId: context.ownerId }).catch((error: unknown) => {
      if (header || !isQuarryError(error, 'SESSION_NOT_FOUND')) throw error;
      return null;
    });
    let after: number;
    if (!session) {
      const system = body.messages.filter((message) => message.role === 'system' || message.role === 'developer').map(textOf).join('\n').trim();
      ({ session } = await startResearch(context, {
        id: sessionId,
        question: userTurns[0]!,
        settings: system ? { systemInstruction: system.slice(0, 4000) } : undefined,
        docs: dependencies.defaults.docs,
        search: dependencies.defaults.search,
      }));
      after = 0;
    } else {
      after = session.lastEventOffset;
      const asked = (await context.store.listMessages(session.id, { ownerId: context.ownerId })).filter((message) => message.role === 'user').length;
      const idle = !['running', 'queued'].includes(session.status);
      if (userTurns.length > asked && !idle) {
        throw new QuarryError('SESSION_ALREADY_RUNNING', 'Quarry is still working on the previous message of this conversation; send the new one when it has answered.', {
          details: { sessionId: session.id },
        });
      }
      if (userTurns.length > asked) await askSession(context, { sessionId: session.id, text: userTurns.at(-1)! });
      else if (idle) {
        // The same conversation again, nothing new: answer with what the session already said.
        after = -1;
      }
    }
    const current = session;
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    c.header('x-quarry-session-id', current.id);
    const outcome = async (onProgress?: (line: string) => Promise<void>, signal?: AbortSignal): Promise<string> => {
      if (after < 0) return finalText(dependencies, current, (await context.store.readEvents(current.id, { after: Math.max(0, current.lastEventOffset - 20) })).filter(isEnd).at(-1) ?? null);
      for await (const event of followEvents(context.store, current.id, { after, ownerId: context.ownerId, signal })) {
        const line = progressLine(event);
        if (line && onProgress) await onProgress(line);
        if (isEnd(event)) return finalText(dependencies, current, event);
      }
      return '';
    };
    if (!body.stream) {
      const content = await outcome(undefined, c.req.raw.signal);
      return c.json({ id, object: 'chat.completion', created, model: MODEL, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } });
    }
    return streamSSE(c, async (stream) => {
      const controller = new AbortController();
      stream.onAbort(() => controller.abort());
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        stream.writeSSE({ data: JSON.stringify({ id, object: 'chat.completion.chunk', created, model: MODEL, choices: [{ index: 0, delta, finish_reason: finish }] }) });
      await chunk({ role: 'assistant', content: '' });
      const content = await outcome((line) => chunk({ reasoning_content: line }), controller.signal);
      for (const piece of content.match(/[\s\S]{1,400}/g) ?? []) await chunk({ content: piece });
      await chunk({}, 'stop');
      await stream.writeSSE({ data: '[DONE]' });
    });
  });

  return app;
}
