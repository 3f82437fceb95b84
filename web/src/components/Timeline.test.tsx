// @vitest-environment happy-dom
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { Timeline, buildTimeline } from './Timeline.tsx';

const event = (offset: number, type: string, data: Record<string, unknown>) => ({ offset, type, data, createdAt: new Date().toISOString() });

describe('Timeline', () => {
  const events = [
    event(1, 'step-start', { key: 'plan', phase: 'plan', attempt: 1 }),
    event(2, 'step-end', { key: 'plan', status: 'completed', durationMs: 12, usage: { inputTokens: 30, outputTokens: 12 } }),
    event(3, 'step-start', { key: 'iteration-1/search-0', phase: 'search', attempt: 2 }),
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
