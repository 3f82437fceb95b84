import { expect, it } from 'vitest';
import { conversationWithExchanges, outlineOf, outlineText, pendingQuestion } from './outline-question.ts';

it('says what a waiting session asks in any client: clarifying questions, or the outline to review', () => {
  expect(pendingQuestion({ questions: ['Which country?', 'For whom?'] })).toBe(
    'Before I start, a few questions to get this right:\n\n1. Which country?\n2. For whom?\n\nAnswer them in one message, or reply "skip" to research the question as asked.',
  );
  expect(pendingQuestion({ outline: { sections: [{ title: 'Tides', focus: 'why they rise' }] } })).toContain(
    '1. Tides: why they rise',
  );
  expect(pendingQuestion(null)).toContain('Reply "approve"');
});

it('shows an outline as text: numbered sections, a group once above its sections, what a revision did', () => {
  const outline = {
    title: 'Tides',
    sections: [
      { title: 'Why tides rise', focus: 'the moon', noteIds: [] },
      { title: 'Tidal power', focus: 'barrages', noteIds: [], group: 'Also in these documents' },
      { title: 'Tide tables', focus: '', noteIds: [], group: 'Also in these documents' },
    ],
    feedback: { applied: ['shorter'], notUnderstood: [] },
  };
  expect(outlineOf({ outline })).toBe(outline);
  expect(outlineOf({ questions: ['Which?'] })).toBeNull();
  expect(outlineText(outline)).toBe(
    '1. Why tides rise: the moon\nAlso in these documents:\n   2. Tidal power: barrages\n   3. Tide tables\n\nDone: shorter.',
  );
});

it('tells a session’s answered questions in the conversation, in their place in time', () => {
  const messages = [
    { role: 'user', content: 'Why tides?', createdAt: 1 },
    { role: 'assistant', content: '# Tides', createdAt: 9 },
  ] as const;
  const steps = [
    {
      kind: 'input',
      status: 'completed',
      input: { questions: ['Which sea?'] },
      output: 'The North Sea',
      startedAt: 2,
      endedAt: 5,
    },
    {
      kind: 'input',
      status: 'running',
      input: { outline: { sections: [] } },
      output: null,
      startedAt: 10,
      endedAt: null,
    },
    { kind: 'task', status: 'completed', input: {}, output: 1, startedAt: 3, endedAt: 4 },
  ] as const;
  const turns = conversationWithExchanges(messages, steps);
  expect(turns.map((turn) => `${turn.role}: ${turn.content.split('\n')[0]}`)).toEqual([
    'user: Why tides?',
    'assistant: Before I start, a few questions to get this right:',
    'user: The North Sea',
    'assistant: # Tides',
  ]);
});
