// @vitest-environment happy-dom
import { render, screen } from '@testing-library/react';
import { expect, it } from 'vitest';
import type { Step } from '../api-client.ts';
import { PromptCard } from './Prompts.tsx';

it('shows a failed model step as failed, with why, on its card', () => {
  const step = {
    runId: 'run-1',
    key: 'iteration-1/notes-0',
    phase: 'analyze',
    kind: 'llm',
    status: 'failed',
    attempts: 3,
    startedAt: '2026-11-25T00:00:00Z',
    endedAt: '2026-11-25T00:00:05Z',
    durationMs: 5000,
    usage: { model: 'openai:gpt-4.1-mini' },
    error: { code: 'STEP_FAILED', message: 'the model answered 500 three times' },
  } as unknown as Step;
  render(<PromptCard sessionId="s" step={step} />);
  expect(screen.getByText(/iteration-1\/notes-0/).textContent).toContain('failed');
  expect(screen.getByText('Failed after 3 attempts: the model answered 500 three times')).toBeTruthy();
});
