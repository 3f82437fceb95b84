import type { SessionDetail, Source, Step } from './api-client.ts';
import type { LiveEvent } from './use-session-events.ts';

/** True when the events tell what the steps did (a session run here); an imported one has only its journal. */
export function eventsShowSteps(events: readonly LiveEvent[]): boolean {
  return events.some((event) => event.type === 'step-start');
}

/**
 * The journal told as the events a run would have sent: a run-start for each run, a step-start and
 * step-end for each step (with its input: a query, a URL), a source-found for each page read (titled
 * as the session's sources name it). What the Journal and Progress tabs show for a session whose
 * events do not carry its steps, such as one imported from a file; its last run ends as the session
 * stands. Offsets are negative so they
 * never meet a real event's.
 */
export function journalEvents(
  steps: readonly Step[],
  sources: readonly Source[],
  status: SessionDetail['status'],
): LiveEvent[] {
  const titles = new Map(sources.map((source) => [source.url, source.title]));
  const events: LiveEvent[] = [];
  const add = (type: string, data: unknown, at: string) =>
    events.push({ type, data, offset: -(events.length + 1), createdAt: at } as LiveEvent);
  let run: string | null = null;
  const ordered = [...steps].filter((step) => step.status !== 'superseded').sort((a, b) => a.seq - b.seq);
  for (const step of ordered) {
    if (step.runId !== run) {
      run = step.runId;
      add('run-start', { runId: run, number: 0, workerId: '', resumeAt: null, completedSteps: 0 }, step.startedAt);
    }
    const { key, phase, kind } = step;
    add('step-start', { key, phase, kind, attempt: step.attempts, input: step.input }, step.startedAt);
    if (step.endedAt === null || step.status === 'running') continue;
    add(
      'step-end',
      { key, phase, kind, status: step.status, durationMs: step.durationMs ?? undefined, usage: step.usage },
      step.endedAt,
    );
    const url = (step.input as { url?: unknown } | undefined)?.url;
    if (phase === 'read' && step.status === 'completed' && typeof url === 'string')
      add('source-found', { url, title: titles.get(url) ?? url, fetched: true }, step.endedAt);
  }
  // The last run ended as the session stands (a running one is told by its own events).
  const ended = events.at(-1)?.createdAt;
  if (ended && status !== 'running' && status !== 'queued') add('run-end', { status }, ended);
  return events;
}
