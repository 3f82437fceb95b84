import { WorkflowRegistry } from '../engine/workflow.ts';
import { fetchPage } from '../providers/fetch/fetch-page.ts';
import { createLanguageModel } from '../providers/llm/create-language-model.ts';
import { createSearchProviders } from '../providers/search/create-search-providers.ts';
import type { Analyst } from '../research/analyst.ts';
import { ExtractiveAnalyst } from '../research/extractive-analyst.ts';
import { LlmAnalyst } from '../research/llm-analyst.ts';
import type { ResearchSettings } from '../research/research-settings.ts';
import { researchWorkflow, type ResearchDependencies } from '../research/research-workflow.ts';
import type { Store } from '../store/store.ts';

/** The analyst a session's settings ask for: a model when one is set, the extractive analyst otherwise. */
export function analystFor(settings: ResearchSettings, env: NodeJS.ProcessEnv): Analyst {
  if (!settings.model) return new ExtractiveAnalyst();
  const main = createLanguageModel(settings.model, env);
  return new LlmAnalyst(main, settings.fastModel ? createLanguageModel(settings.fastModel, env) : main);
}

/** Hosts fetches may reach although private (`QUARRY_FETCH_ALLOW`, comma-separated hosts or CIDRs). */
export function fetchAllowList(env: NodeJS.ProcessEnv): string[] {
  return (env.QUARRY_FETCH_ALLOW ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
}

/** Wires the research workflow to real providers: the composition every entry point shares. */
export function createResearchDependencies(store: Store, env: NodeJS.ProcessEnv = process.env): ResearchDependencies {
  const allow = fetchAllowList(env);
  return {
    store,
    analystFor: (settings) => analystFor(settings, env),
    searchProvidersFor: (settings) => createSearchProviders({ store, docs: settings.docs, web: settings.search, env }),
    fetchPage: (url, signal) => fetchPage(url, { signal, allow }),
  };
}

export function createWorkflowRegistry(store: Store, env: NodeJS.ProcessEnv = process.env): WorkflowRegistry {
  return new WorkflowRegistry([researchWorkflow(createResearchDependencies(store, env))]);
}
