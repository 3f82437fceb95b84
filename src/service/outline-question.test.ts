import { expect, it } from 'vitest';
import { pendingQuestion } from './outline-question.ts';

it('says what a waiting session asks in any client: clarifying questions, or the outline to review', () => {
  expect(pendingQuestion({ questions: ['Which country?', 'For whom?'] })).toBe(
    'Before I start, a few questions to get this right:\n\n1. Which country?\n2. For whom?\n\nAnswer them in one message, or reply "skip" to research the question as asked.',
  );
  expect(pendingQuestion({ outline: { sections: [{ title: 'Tides', focus: 'why they rise' }] } })).toContain(
    '1. Tides: why they rise',
  );
  expect(pendingQuestion(null)).toContain('Reply "approve"');
});
