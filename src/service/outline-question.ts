import { clarifyingQuestionsOf, clarifyingText } from '../research/clarify.ts';
import type { Outline } from '../research/research-types.ts';
import { feedbackReply } from '../research/write-report.ts';
import type { Message, StepRecord } from '../store/store.ts';

/** The outline of a pending input's payload, when it is an outline review (else null). */
export function outlineOf(payload: unknown): Outline | null {
  const outline = (payload as { outline?: unknown } | null | undefined)?.outline as Outline | undefined;
  return outline && Array.isArray(outline.sections) ? outline : null;
}

/**
 * An outline as a person reviews it as text: its sections numbered with what each covers, grouped
 * ones under their group's heading, and what a revision did with the feedback.
 */
export function outlineText(outline: Outline): string {
  const lines: string[] = [];
  let group: string | undefined;
  outline.sections.forEach((section, index) => {
    if (section.group !== group) {
      group = section.group;
      if (group) lines.push(`${group}:`);
    }
    lines.push(`${group ? '   ' : ''}${index + 1}. ${section.title}${section.focus ? `: ${section.focus}` : ''}`);
  });
  const reply = outline.feedback ? feedbackReply(outline.feedback) : '';
  return reply ? `${lines.join('\n')}\n\n${reply}` : lines.join('\n');
}

/** The outline a review asks about, as the question the reader answers. */
export function outlineQuestion(outline: Outline | null): string {
  return `Here is the outline of the report:\n\n${outline ? outlineText(outline) : ''}\n\nReply "approve" to write it, or say what to change.`;
}

/**
 * What a waiting session asks, from its pending input's payload, as the message a person answers in
 * any client: clarifying questions before research, or the outline to review.
 */
export function pendingQuestion(payload: unknown): string {
  const questions = clarifyingQuestionsOf(payload);
  if (questions) return clarifyingText(questions);
  return outlineQuestion(outlineOf(payload));
}

/** A turn of a session's conversation as a person reads it, at the time it was said. */
export interface ConversationTurn {
  role: string;
  content: string;
  at: number;
}

/**
 * The conversation with what the session asked a person and what they answered (clarifying
 * questions, outline reviews): those live in the journal as answered input steps, not as messages,
 * and are told here in their place in time.
 */
export function conversationWithExchanges(
  messages: readonly Pick<Message, 'role' | 'content' | 'createdAt'>[],
  steps: readonly Pick<StepRecord, 'kind' | 'status' | 'input' | 'output' | 'startedAt' | 'endedAt'>[],
): ConversationTurn[] {
  const turns: ConversationTurn[] = messages.map((message) => ({
    role: message.role,
    content: message.content,
    at: message.createdAt,
  }));
  for (const step of steps) {
    if (step.kind !== 'input' || step.status !== 'completed') continue;
    turns.push({ role: 'assistant', content: pendingQuestion(step.input), at: step.startedAt });
    const answer = step.output;
    turns.push({
      role: 'user',
      content: typeof answer === 'string' ? answer : JSON.stringify(answer),
      at: step.endedAt ?? step.startedAt,
    });
  }
  // Stable: a message and a step of the same millisecond keep the order they were listed in.
  return turns.sort((a, b) => a.at - b.at);
}
