import { describe, expect, it } from 'vitest';
import type { Source, Step } from './api-client.ts';
import { buildTimeline } from './components/Timeline.tsx';
import { eventsShowSteps, journalEvents } from './journal-events.ts';
import { researchProgress } from './research-progress.ts';

function step(seq: number, runId: string, key: string, phase: string, input: unknown, status = 'completed'): Step {
  const at = new Date(1_000 * seq).toISOString();
  return {
    runId,
    key,
    seq,
    phase,
    kind: 'task',
    status,
    attempts: 1,
    startedAt: at,
    endedAt: status === 'running' ? null : at,
    durationMs: status === 'running' ? null : 5,
    usage: null,
    error: null,
    input,
  } as Step;
}

const source = { url: 'file:///docs/tides.txt', title: 'Tides' } as Source;

describe('a session told from its journal (issue 46: an imported session said "No steps yet.")', () => {
  const steps = [
    step(1, 'r1', 'plan', 'plan', { question: 'Why tides?' }),
    step(2, 'r1', 'iteration-1/search-0', 'search', { query: 'tides moon' }),
    step(3, 'r1', 'iteration-1/read-0', 'read', { url: source.url }),
    step(4, 'r1', 'iteration-1/read-1', 'read', { url: 'file:///docs/gone.txt' }, 'superseded'),
    step(5, 'r2', 'write/section-0', 'write', {}),
  ];

  it('lists every step in the journal, run by run, superseded ones left out', () => {
    const events = journalEvents(steps, [source], 'completed');
    expect(eventsShowSteps(events)).toBe(true);
    const keys = buildTimeline(events).flatMap((phase) => phase.steps.map((each) => `${each.key} ${each.status}`));
    expect(keys).toEqual([
      'plan completed',
      'iteration-1/search-0 completed',
      'iteration-1/read-0 completed',
      'write/section-0 completed',
    ]);
  });

  it('gives the progress its searches and the sources read, titled, and the session’s end', () => {
    const progress = researchProgress(journalEvents(steps, [source], 'completed'));
    expect(progress.queries).toEqual([{ query: 'tides moon', done: true }]);
    expect(progress.sources).toMatchObject([{ url: source.url, title: 'Tides' }]);
    expect(progress.completed).toBe(true);
    expect(researchProgress(journalEvents(steps, [source], 'interrupted')).completed).toBe(false);
  });
});
