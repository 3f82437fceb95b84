import { createLanguageModel } from '../providers/llm/create-language-model.ts';
import { defaultTitle } from '../research/research-workflow.ts';
import { queryTerms } from '../shared/terms.ts';
import { inModelCall, modelTelemetry } from '../shared/tracing.ts';
import type { ChatTurn } from './chat-conversation.ts';
import type { ServiceContext } from './service-context.ts';

/**
 * Chat front ends send their own small tasks to the model the user chats with: a title for the
 * conversation, tags, suggested follow-ups, search queries. Sent to Quarry they must not start a
 * research; they get a short answer and belong to no session.
 *
 * The rule (docs/API.md, "Front-end housekeeping"): the request's last user message is a task prompt
 * when it opens with `### Task:` (Open WebUI's templates), or holds the conversation in a
 * `<chat_history>` block, or asks in its first lines to generate a title, tags or follow-up
 * questions for the conversation, chat or query (LibreChat and others).
 */
export interface Chore {
  kind: 'title' | 'tags' | 'follow-ups' | 'queries' | 'other';
  /** The task prompt as the client sent it. */
  prompt: string;
  /** The first user message of the conversation the task is about, when the prompt quotes it. */
  question: string | null;
  /** The client asks for JSON (`{ "title": … }`). */
  json: boolean;
}

const ASKS_FOR =
  /\b(generate|create|suggest|write|give|provide|produce)\b[^\n]{0,120}\b(title|tags?|follow[- ]?up (?:questions|prompts)|search quer(?:y|ies))\b/i;
const ABOUT = /\b(?:this|the|our|above|previous|following)\s+(?:conversation|chat(?: history)?|query|messages?)\b/i;

function kindOf(prompt: string): Chore['kind'] {
  const task = (/###\s*Task:\s*([\s\S]{0,400})/i.exec(prompt)?.[1] ?? prompt.slice(0, 600)).toLowerCase();
  if (/follow[- ]?up/.test(task)) return 'follow-ups';
  if (/\btags?\b/.test(task)) return 'tags';
  if (/\btitle\b/.test(task)) return 'title';
  if (/search quer|queries/.test(task)) return 'queries';
  return 'other';
}

/** The client's task in this request, or null when it is a conversation turn. */
export function recognizeChore(turns: ChatTurn[]): Chore | null {
  const last = turns.findLast((turn) => turn.role === 'user');
  if (!last) return null;
  const prompt = last.text.trim();
  const head = prompt.slice(0, 600);
  const isTask =
    /^###\s*Task:/i.test(prompt) ||
    /<chat_history>[\s\S]*<\/chat_history>/i.test(prompt) ||
    (ASKS_FOR.test(head) && ABOUT.test(head));
  if (!isTask) return null;
  const history = /<chat_history>([\s\S]*?)<\/chat_history>/i.exec(prompt)?.[1] ?? '';
  const quoted =
    /^\s*USER:\s*(.+)$/im.exec(history)?.[1] ?? /-{3,}\s*\n+([\s\S]+?)\n+\s*-{3,}/.exec(prompt)?.[1] ?? null;
  return { kind: kindOf(prompt), prompt, question: quoted?.trim() || null, json: /\bjson\b/i.test(prompt) };
}

/**
 * A short answer to a client's task: the server's fast model (or its model) answers the prompt as
 * the client wrote it; without a model, a title is the conversation's session title (or its first
 * question, shortened), tags are its main words, and follow-ups and search queries are none (a
 * research agent does its own searching).
 */
export async function answerChore(
  context: ServiceContext,
  chore: Chore,
  signal?: AbortSignal,
): Promise<{ text: string; usage: { inputTokens: number; outputTokens: number } }> {
  const spec = context.config.fastModel ?? context.config.model;
  if (spec) {
    const model = createLanguageModel(spec, context.config);
    const { generateText } = await import('ai');
    return inModelCall(model.id, async () => {
      const result = await generateText({
        model: await model.load(),
        prompt: chore.prompt,
        abortSignal: signal,
        maxRetries: 1,
        experimental_telemetry: modelTelemetry('quarry.housekeeping'),
      });
      return {
        text: result.text.trim(),
        usage: { inputTokens: result.usage.inputTokens ?? 0, outputTokens: result.usage.outputTokens ?? 0 },
      };
    });
  }
  return { text: await offlineAnswer(context, chore), usage: { inputTokens: 0, outputTokens: 0 } };
}

async function offlineAnswer(context: ServiceContext, chore: Chore): Promise<string> {
  const question = chore.question ?? '';
  const wrap = (key: string, value: unknown, plain: string) => (chore.json ? JSON.stringify({ [key]: value }) : plain);
  switch (chore.kind) {
    case 'title': {
      const session = question
        ? (await context.store.listSessions({ search: question.slice(0, 200), limit: 20 })).sessions.find(
            (each) => each.question === question,
          )
        : undefined;
      const words = defaultTitle(question || 'Research')
        .replace(/[?.!]+$/, '')
        .split(/\s+/);
      const title = session && session.title !== defaultTitle(question) ? session.title : words.slice(0, 6).join(' ');
      return wrap('title', title, title);
    }
    case 'tags': {
      const tags = [...new Set(queryTerms(question))].slice(0, 3);
      return wrap('tags', tags, tags.join(', '));
    }
    case 'follow-ups':
      return wrap('follow_ups', [], '');
    case 'queries':
      return wrap('queries', [], '');
    default:
      return chore.json ? '{}' : '';
  }
}
