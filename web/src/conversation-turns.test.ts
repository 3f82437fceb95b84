import { expect, it } from 'vitest';
import type { Message } from './api-client.ts';
import { conversationTurns } from './conversation-turns.ts';

const message = (seq: number, role: Message['role'], content: string) =>
  ({ id: String(seq), seq, role, content, runId: null, phase: null, createdAt: '2026-11-25T00:00:00Z' }) as Message;

it('keeps answers, leaves out the first report, and says where a later report version answered', () => {
  const turns = conversationTurns([
    message(1, 'user', 'How do tides work?'),
    { ...message(2, 'assistant', ''), reportVersion: 1 },
    message(3, 'user', 'When did La Rance open?'),
    message(4, 'assistant', 'In 1966 [1].'),
    message(5, 'user', 'Cover wave power too.'),
    { ...message(6, 'assistant', ''), reportVersion: 2 },
  ]);
  expect(turns.map((turn) => [turn.role, turn.content])).toEqual([
    ['user', 'When did La Rance open?'],
    ['assistant', 'In 1966 [1].'],
    ['user', 'Cover wave power too.'],
    ['assistant', '_Written as version 2 of the report, shown above._'],
  ]);
});
