import type { StepDetail } from '../../src/store/store.ts';
import { type LoggedCall, lastUserOf, systemOf } from './fake-openai-server.ts';

/** The model steps of a journal that send one prompt, and how often a fake model received it. */
export interface PromptTally {
  /** The system prompt and the last user message, as one string. */
  prompt: string;
  /** The steps' keys. */
  keys: string[];
  /** How many steps send it, how many of them completed, and how often they were begun in all. */
  steps: number;
  completed: number;
  attempts: number;
  /** How many of `calls` carried it. */
  sent: number;
}

const promptOf = (system: string, user: string) => JSON.stringify([system, user]);

/**
 * Model steps grouped by the prompt they send, with how many of `calls` carried it. A call is told
 * apart from another only by its prompt, and two steps of one session can send the same prompt (an
 * outline whose sections came out alike), so a test counts calls per prompt, never per step.
 */
export function tallyPrompts(steps: readonly StepDetail[], calls: readonly LoggedCall[]): PromptTally[] {
  const tallies = new Map<string, PromptTally>();
  for (const step of steps) {
    if (step.kind !== 'llm' || !step.prompt) continue;
    const prompt = promptOf(step.prompt.system ?? '', step.prompt.user);
    const tally = tallies.get(prompt) ?? { prompt, keys: [], steps: 0, completed: 0, attempts: 0, sent: 0 };
    tally.keys.push(step.key);
    tally.steps++;
    if (step.status === 'completed') tally.completed++;
    tally.attempts += step.attempts;
    tallies.set(prompt, tally);
  }
  for (const call of calls) {
    const tally = tallies.get(promptOf(systemOf(call.request), lastUserOf(call.request)));
    if (tally) tally.sent++;
  }
  return [...tallies.values()];
}
