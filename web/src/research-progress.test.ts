import { describe, expect, it } from 'vitest';
import { researchProgress } from './research-progress.ts';
import type { LiveEvent } from './use-session-events.ts';

let offset = 0;
function live(type: string, data: unknown): LiveEvent {
  offset += 1;
  return { type, data, offset, createdAt: new Date(0).toISOString() } as LiveEvent;
}

describe('research progress', () => {
  it('says a step waits for a provider from its step-retry until the step ends', () => {
    const start = live('step-start', { key: 'plan', phase: 'plan', kind: 'llm', attempt: 1 });
    const retry = live('step-retry', {
      key: 'plan',
      attempt: 1,
      delayMs: 4000,
      error: { code: 'STEP_FAILED', message: 'The model m is unavailable: 503' },
    });
    expect(researchProgress([start, retry]).retrying).toEqual({
      key: 'plan',
      message: 'The model m is unavailable: 503',
      delayMs: 4000,
    });
    const end = live('step-end', { key: 'plan', phase: 'plan', kind: 'llm', status: 'completed' });
    expect(researchProgress([start, retry, end]).retrying).toBeNull();
  });
});
