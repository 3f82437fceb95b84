import type { Message } from '../store/store.ts';

export interface ContextWindowOptions {
  /** Newest user/assistant exchanges kept. Default 25. */
  maxPairs?: number;
  /** Tokens (cl100k/o200k family, counted with gpt-tokenizer) for the whole window. Default 6000. */
  maxTokens?: number;
  /** Longest single message kept, in tokens; longer ones are cut. Default 1500. */
  maxMessageTokens?: number;
}

type CountTokens = (text: string) => number;

function cut(countTokens: CountTokens, text: string, maxTokens: number): string {
  if (countTokens(text) <= maxTokens) return text;
  // Cut by characters in proportion, then tighten: cheap and close enough for a context window.
  let end = Math.floor((text.length * maxTokens) / countTokens(text));
  while (end > 0 && countTokens(text.slice(0, end)) > maxTokens) end = Math.floor(end * 0.9);
  return `${text.slice(0, end)} […]`;
}

/**
 * The conversation a follow-up sees: system messages always, then the newest exchanges that fit the
 * pair and token budgets, oldest first, as `Role: text` lines.
 */
export async function windowConversation(
  messages: readonly Message[],
  options: ContextWindowOptions = {},
): Promise<string> {
  // The tokenizer's tables take a quarter second to load; only follow-ups need them.
  const { countTokens } = await import('gpt-tokenizer');
  const maxPairs = options.maxPairs ?? 25;
  const maxTokens = options.maxTokens ?? 6000;
  const perMessage = options.maxMessageTokens ?? 1500;
  const system = messages
    .filter((message) => message.role === 'system')
    .map((message) => `System: ${cut(countTokens, message.content, perMessage)}`);
  let budget = maxTokens - system.reduce((sum, line) => sum + countTokens(line), 0);
  const turns = messages.filter((message) => message.role !== 'system');
  const kept: string[] = [];
  let users = 0;
  for (let index = turns.length - 1; index >= 0; index--) {
    const message = turns[index]!;
    if (message.role === 'user' && ++users > maxPairs) break;
    const line = `${message.role === 'user' ? 'User' : 'Assistant'}: ${cut(countTokens, message.content, perMessage)}`;
    const tokens = countTokens(line);
    if (tokens > budget) break;
    budget -= tokens;
    kept.unshift(line);
  }
  return [...system, ...kept].join('\n\n');
}
