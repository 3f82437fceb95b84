import { describe, expect, it } from 'vitest';
import type { Message, Run } from '../store/store.ts';
import { answerCitations } from './session-queries.ts';

const message = (id: string, runId: string, content: string): Message => ({
  id,
  sessionId: 's',
  seq: 1,
  role: 'assistant',
  content,
  runId,
  phase: 'write',
  createdAt: 0,
});
const run = (id: string, output: unknown): Run =>
  ({ id, sessionId: 's', number: 1, kind: 'follow-up', input: {}, status: 'completed', output, createdAt: 0 }) as Run;
const tides = { number: 1, url: 'file:///docs/tides.txt', title: 'Tides' };
const solar = { number: 4, url: 'https://example.org/solar', title: 'Solar' };

describe('answerCitations: each answer resolves its [n] against its own numbers (issue 46)', () => {
  it('takes an answer-only run’s citations, and an answer written beside a version its own', () => {
    const onlyAnswer = message('m1', 'r1', 'It holds the tide [1].');
    const beside = message('m2', 'r2', 'Panels [4].');
    const answers = answerCitations(
      [onlyAnswer, beside],
      [
        run('r1', { answer: onlyAnswer.content, citations: [tides], claims: [] }),
        run('r2', { answer: beside.content, report: '# Solar', citations: [tides], answerCitations: [solar] }),
      ],
    );
    expect(answers.get('m1')?.citations).toEqual([tides]);
    expect(answers.get('m2')).toEqual({ citations: [solar], claims: [] });
  });

  it('reads an answer recorded before answers kept their map back from its own list, never from the version', () => {
    const content =
      'Panels [4].\n\n**Sources**\n\n4. Solar — <https://example.org/solar>\n1. Tides — </docs/tides.txt>\n';
    const answers = answerCitations(
      [message('m3', 'r3', content)],
      [run('r3', { answer: content, report: '# Solar', citations: [{ ...tides, number: 4 }] })],
    );
    expect(answers.get('m3')?.citations).toEqual([solar, tides]);
  });

  it('leaves out what is not an answer: a report version posted as a message, a user’s message', () => {
    const report = message('m4', 'r4', '# A report');
    const answers = answerCitations(
      [report, { ...message('m5', 'r4', 'a question'), role: 'user' }],
      [run('r4', { report: '# A report', citations: [tides] })],
    );
    expect(answers.size).toBe(0);
  });
});
