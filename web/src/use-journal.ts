import { useEffect, useState } from 'react';
import { api, type Step } from './api-client.ts';

/**
 * The session's journal with each step's input, read once when `wanted`: what a session shows when
 * its events do not tell it (an imported session has its journal but not the events of its runs).
 */
export function useJournal(sessionId: string, wanted: boolean): Step[] | null {
  const [steps, setSteps] = useState<Step[] | null>(null);
  useEffect(() => {
    if (!wanted) return;
    let current = true;
    api.steps(sessionId, { include: 'inputs' }).then(
      (loaded) => current && setSteps(loaded.steps),
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [sessionId, wanted]);
  return wanted ? steps : null;
}
