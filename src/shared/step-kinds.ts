/** What a journaled step records: work, a model call, an input wait, or a recorded clock or random value. */
export const stepKinds = ['task', 'llm', 'input', 'clock', 'random'] as const;
export type StepKind = (typeof stepKinds)[number];
