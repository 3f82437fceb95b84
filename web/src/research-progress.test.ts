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

  it('lists every run’s searches and sources, as the totals count them, and the stage of the current run (issue 46)', () => {
    const first = [
      live('run-start', { runId: 'r1' }),
      live('phase-start', { phase: 'search' }),
      live('step-start', {
        key: 'iteration-1/search-0',
        phase: 'search',
        kind: 'task',
        attempt: 1,
        input: { query: 'tides' },
      }),
      live('step-end', { key: 'iteration-1/search-0', phase: 'search', kind: 'task', status: 'completed' }),
      live('source-found', { url: 'file:///docs/tides.txt', title: 'Tides', query: 'tides' }),
      live('notes-take', { url: 'file:///docs/tides.txt', count: 2 }),
      live('run-end', { status: 'waiting' }),
    ];
    const second = [
      live('run-start', { runId: 'r2' }),
      live('step-start', {
        key: 'iteration-1/search-0',
        phase: 'search',
        kind: 'task',
        attempt: 1,
        input: { query: 'neap tides' },
      }),
      live('phase-start', { phase: 'write' }),
    ];
    const progress = researchProgress([...first, ...second]);
    // The follow-up's search reuses the first run's step key: both are listed, each with its own state.
    expect(progress.queries).toEqual([
      { query: 'tides', done: true },
      { query: 'neap tides', done: false },
    ]);
    expect(progress.sources).toMatchObject([{ title: 'Tides', where: 'local document', notes: 2 }]);
    expect(progress.stage).toBe('write');
    expect(progress.ended).toBe(false);
  });
});
