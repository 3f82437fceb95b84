import { describe, expect, it } from 'vitest';
import type { StepDetail } from '../../src/store/store.ts';
import type { LoggedCall } from './fake-openai-server.ts';
import { tallyPrompts } from './model-calls.ts';

const step = (key: string, user: string, attempts = 1): StepDetail => ({
  runId: 'r',
  key,
  seq: 1,
  phase: 'write',
  kind: 'llm',
  status: 'completed',
  attempts,
  input: null,
  output: null,
  error: null,
  usage: null,
  startedAt: 0,
  endedAt: 0,
  prompt: { system: 'S', user },
});
const call = (user: string): LoggedCall => ({
  request: {
    model: 'm',
    messages: [
      { role: 'system', content: 'S' },
      { role: 'user', content: user },
    ],
  } as LoggedCall['request'],
  reply: '',
});

describe('tallyPrompts (regression: failover tests flaked when two sections sent the same prompt)', () => {
  it('counts two steps that send one prompt together, so each sent once is no repeat', () => {
    const [tally] = tallyPrompts(
      [step('write/section-0', 'same'), step('write/section-1', 'same')],
      [call('same'), call('same')],
    );
    expect(tally).toMatchObject({ keys: ['write/section-0', 'write/section-1'], steps: 2, attempts: 2, sent: 2 });
  });

  it('shows a step begun once whose prompt went out twice', () => {
    const tallies = tallyPrompts(
      [step('plan', 'plan it'), step('outline', 'outline it')],
      [call('plan it'), call('plan it')],
    );
    expect(tallies.find((tally) => tally.keys[0] === 'plan')).toMatchObject({ attempts: 1, sent: 2 });
    expect(tallies.find((tally) => tally.keys[0] === 'outline')).toMatchObject({ attempts: 1, sent: 0 });
  });
});
