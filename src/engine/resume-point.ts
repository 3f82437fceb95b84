import type { StepRecord } from '../store/store.ts';

/** Where a run stands, computed from its journal without running any workflow code. */
export interface ResumePoint {
  /** The first live step (by `seq`) that has not completed; null when every recorded step has. */
  nextStep: string | null;
  /** Phase of the completed live step with the highest `seq`. */
  lastCompletedPhase: string | null;
  completedSteps: number;
  knownSteps: number;
}

/** `journal` is a run's live steps in `seq` order (as `Store.loadJournal` returns them). */
export function computeResumePoint(journal: readonly StepRecord[]): ResumePoint {
  let nextStep: string | null = null;
  let lastCompletedPhase: string | null = null;
  let completedSteps = 0;
  for (const step of journal) {
    if (step.status === 'superseded') continue;
    if (step.status === 'completed') {
      completedSteps += 1;
      lastCompletedPhase = step.phase;
    } else {
      nextStep ??= step.key;
    }
  }
  const knownSteps = journal.filter((step) => step.status !== 'superseded').length;
  return { nextStep, lastCompletedPhase, completedSteps, knownSteps };
}
