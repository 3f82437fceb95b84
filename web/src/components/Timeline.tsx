import type { LiveEvent } from '../use-session-events.ts';

interface StepView {
  key: string;
  status: string;
  durationMs?: number;
  tokens?: number;
  attempt: number;
}

/** Phases and their steps, built from the event stream (the live view of the journal). */
export function buildTimeline(events: LiveEvent[]): { phase: string; steps: StepView[] }[] {
  const phases: { phase: string; steps: StepView[] }[] = [];
  const steps = new Map<string, StepView>();
  for (const event of events) {
    if (event.type === 'step-start') {
      const { data } = event;
      const phase = data.phase ?? 'other';
      // Consecutive steps of one phase share a group; a phase met again (a new iteration) opens another.
      let group = phases.at(-1)?.phase === phase ? phases.at(-1) : undefined;
      if (!group) {
        group = { phase, steps: [] };
        phases.push(group);
      }
      const step: StepView = { key: data.key, status: 'running', attempt: data.attempt };
      const previous = steps.get(step.key);
      if (previous) Object.assign(previous, step);
      else {
        steps.set(step.key, step);
        group.steps.push(step);
      }
    }
    if (event.type === 'step-end') {
      const { data } = event;
      const step = steps.get(data.key);
      if (!step) continue;
      step.status = data.status;
      step.durationMs = data.durationMs;
      const usage = data.usage;
      if (usage) step.tokens = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
    }
  }
  return phases;
}

export function Timeline({ events }: { events: LiveEvent[] }) {
  const phases = buildTimeline(events);
  if (phases.length === 0) return <p className="muted">No steps yet.</p>;
  return (
    <ol className="timeline">
      {phases.map((phase, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a phase met again is a new group; its position is its identity
        <li key={`${phase.phase}-${index}`}>
          <h3>{phase.phase}</h3>
          <ul>
            {phase.steps.map((step) => (
              <li key={step.key} className={`step ${step.status}`} aria-busy={step.status === 'running'}>
                <span className="key">{step.key}</span>
                <span className="muted small">
                  {step.status}
                  {step.durationMs !== undefined ? ` · ${step.durationMs} ms` : ''}
                  {step.tokens ? ` · ${step.tokens} tokens` : ''}
                  {step.attempt > 1 ? ` · attempt ${step.attempt}` : ''}
                </span>
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ol>
  );
}
