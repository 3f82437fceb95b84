import { clarifyingQuestionsOf, clarifyingText } from '../research/clarify.ts';
import type { Outline } from '../research/research-types.ts';

/** The outline a review asks about, as the question the reader answers. */
export function outlineQuestion(outline: Outline | undefined): string {
  const sections = (outline?.sections ?? [])
    .map((section, index) => `${index + 1}. ${section.title}: ${section.focus}`)
    .join('\n');
  return `Here is the outline of the report:\n\n${sections}\n\nReply "approve" to write it, or say what to change.`;
}

/**
 * What a waiting session asks, from its pending input's payload, as the message a person answers in
 * any client: clarifying questions before research, or the outline to review.
 */
export function pendingQuestion(payload: unknown): string {
  const questions = clarifyingQuestionsOf(payload);
  if (questions) return clarifyingText(questions);
  return outlineQuestion((payload as { outline?: Outline } | null | undefined)?.outline);
}
