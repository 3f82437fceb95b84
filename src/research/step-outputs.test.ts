import { describe, expect, it } from 'vitest';
import { runOutput, runReport, stepOutput } from './step-outputs.ts';

describe('typed step outputs', () => {
  it('reads a completed step only as the kind its key names', () => {
    const read = { key: 'follow-up/iteration-2/read-3', status: 'completed' as const, output: { url: 'u', text: 't' } };
    expect(stepOutput(read, 'read')?.text).toBe('t');
    expect(stepOutput(read, 'notes')).toBeUndefined();
    expect(stepOutput({ ...read, status: 'failed' }, 'read')).toBeUndefined();
    const plan = { key: 'plan', status: 'completed' as const, output: { value: { queries: ['q'] }, usage: null } };
    expect(stepOutput(plan, 'plan')?.value.queries).toEqual(['q']);
    expect(stepOutput(plan, 'analyze')).toBeUndefined();
    expect(stepOutput(undefined, 'plan')).toBeUndefined();
  });

  it('reads a run’s report only when it completed with one', () => {
    expect(runReport({ status: 'completed', output: { report: '# R' } })).toBe('# R');
    expect(runReport({ status: 'failed', output: { report: '# R' } })).toBeUndefined();
    expect(runReport({ status: 'completed', output: { answer: 'A' } })).toBeUndefined();
    expect(runOutput({ output: null })).toBeUndefined();
    expect(runOutput({ output: { answer: 'A' } })?.answer).toBe('A');
  });
});
