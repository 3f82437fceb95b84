/**
 * Clarifying questions before research starts (setting `clarify`, with a model): the analyst asks
 * at most three when the question is ambiguous, the session waits for the answers like an outline
 * review, and the research takes the question with its clarification. Pure functions: the web UI
 * and the service share them.
 */

/** At most this many questions are asked. */
export const MAX_CLARIFYING_QUESTIONS = 3;

/** Answers that skip the questions: exactly one of these words (trimmed, any case), or nothing. */
export const skipWords = ['skip', 'no', 'none', 'continue', 'go'] as const;

/** True only for an exact skip word or an empty answer; anything else is the clarification. */
export function isSkip(answer: unknown): boolean {
  if (answer === null || answer === undefined) return true;
  const text = String(answer).trim().toLowerCase();
  return text === '' || (skipWords as readonly string[]).includes(text);
}

/** The question research works on once the person clarified it (a skip leaves it as asked). */
export function clarifiedQuestion(question: string, answer: unknown): string {
  if (isSkip(answer)) return question;
  return `${question}\n\nClarification from the person asking: ${String(answer).trim()}`;
}

/** What a pending clarification asks, as the message a person answers. */
export function clarifyingText(questions: readonly string[]): string {
  const list = questions.map((question, index) => `${index + 1}. ${question}`).join('\n');
  return `Before I start, a few questions to get this right:\n\n${list}\n\nAnswer them in one message, or reply "skip" to research the question as asked.`;
}

/** The questions of a pending input's payload, when it is a clarification (else null). */
export function clarifyingQuestionsOf(payload: unknown): string[] | null {
  const questions = (payload as { questions?: unknown } | null)?.questions;
  return Array.isArray(questions) && questions.every((each) => typeof each === 'string') ? questions : null;
}
