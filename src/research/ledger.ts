import type { StepUsageRecord } from '../store/store.ts';
import { parseStepKey } from './step-keys.ts';

/**
 * What a session has spent and done, over every run (outline reviews, follow-ups and rewound steps
 * included): the one sum the web UI, the API and `quarry show` all show.
 */
export interface Ledger {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Searches completed. */
  searches: number;
  /** Sources read (a source read in two runs counts twice: it was read twice). */
  sourcesRead: number;
}

/** The ledger of a session's completed steps. */
export function ledgerOf(steps: readonly StepUsageRecord[]): Ledger {
  const ledger: Ledger = { inputTokens: 0, outputTokens: 0, costUsd: 0, searches: 0, sourcesRead: 0 };
  for (const step of steps) {
    ledger.inputTokens += step.usage?.inputTokens ?? 0;
    ledger.outputTokens += step.usage?.outputTokens ?? 0;
    ledger.costUsd += step.usage?.costUsd ?? 0;
    const kind = parseStepKey(step.key)?.kind;
    if (kind === 'search') ledger.searches++;
    if (kind === 'read') ledger.sourcesRead++;
  }
  return ledger;
}
