import type { RunContext } from '../engine/run-context.ts';
import type { ResearchPhase } from './step-keys.ts';

/** The engine as the research workflow sees it: its steps journal under the research phases only. */
export type ResearchContext = RunContext<ResearchPhase>;
