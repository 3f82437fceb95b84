// @vitest-environment happy-dom
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { event, type QuarryEvent, type WireEvent } from '../../../src/shared/events.ts';
import { buildTimeline, Timeline } from './Timeline.tsx';

const wire = (offset: number, value: QuarryEvent): WireEvent => ({
  ...value,
  offset,
  createdAt: new Date().toISOString(),
});

describe('Timeline', () => {
  const events = [
    wire(1, event('step-start', { key: 'plan', phase: 'plan', kind: 'task', attempt: 1 })),
    wire(
      2,
      event('step-end', {
        key: 'plan',
        phase: 'plan',
        kind: 'task',
        status: 'completed',
        durationMs: 12,
        usage: { inputTokens: 30, outputTokens: 12 },
      }),
    ),
    wire(3, event('step-start', { key: 'iteration-1/search-0', phase: 'search', kind: 'task', attempt: 2 })),
  ];

  it('groups steps by phase with status, duration, tokens and attempts', () => {
    expect(buildTimeline(events)).toEqual([
      { phase: 'plan', steps: [{ key: 'plan', status: 'completed', attempt: 1, durationMs: 12, tokens: 42 }] },
      { phase: 'search', steps: [{ key: 'iteration-1/search-0', status: 'running', attempt: 2 }] },
    ]);
  });

  it('shows the step in progress as busy', () => {
    render(<Timeline events={events} />);
    expect(screen.getByText('iteration-1/search-0').closest('li')?.getAttribute('aria-busy')).toBe('true');
    expect(screen.getByText(/12 ms · 42 tokens/)).toBeTruthy();
    expect(screen.getByText(/attempt 2/)).toBeTruthy();
  });
});
