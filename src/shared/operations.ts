/**
 * What a process's work tells its operator's metrics: counts, durations and token sums, never
 * content. The engine, the store and the server report here; `server/metrics.ts` listens and turns
 * them into Prometheus series. Without a listener a report costs a loop over an empty set.
 */
export type OperationalSignal =
  | { type: 'run-start' }
  | { type: 'run-end'; status: string }
  | {
      type: 'step-end';
      kind: string;
      status: 'completed' | 'failed' | 'interrupted';
      durationMs: number;
      model?: string;
      inputTokens?: number;
      outputTokens?: number;
      costUsd?: number;
    }
  | { type: 'lease-claim'; takeover: boolean }
  | { type: 'store-retry'; code: string }
  | { type: 'event-delivered'; lagMs: number };

type Listener = (signal: OperationalSignal) => void;
const listeners = new Set<Listener>();

export function reportOperation(signal: OperationalSignal): void {
  for (const listener of listeners) listener(signal);
}

/** Hears every report of this process; returns the function that stops hearing. */
export function onOperation(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
