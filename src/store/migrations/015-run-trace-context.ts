import type { Migration } from './migration.ts';

/**
 * A run remembers the trace that started it (a W3C `traceparent`, only when tracing is on), so the
 * worker that runs it, or resumes it after a crash, continues that trace.
 */
export const runTraceContext: Migration = {
  version: 15,
  name: 'run-trace-context',
  script: `
ALTER TABLE runs ADD COLUMN trace_context TEXT;
`,
};
