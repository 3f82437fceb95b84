import type { Message } from './api-client.ts';

/**
 * The conversation under the report: every turn after the question. The first report is the answer
 * to the question (shown above, not repeated); a later turn answered with a new version of the
 * report says so instead of repeating it, so its question never stands with nothing under it.
 */
export function conversationTurns(messages: readonly Message[]): Message[] {
  return messages.slice(1).flatMap((message) => {
    // The server names the version an answer is (the session's detail leaves its text out).
    const version = message.role === 'assistant' ? message.reportVersion : undefined;
    if (version === undefined) return [message];
    if (version === 1) return [];
    return [{ ...message, content: `_Written as version ${version} of the report, shown above._` }];
  });
}
