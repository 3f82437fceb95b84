import type { QuarryConfig } from '../config/quarry-config.ts';
import { WorkflowRegistry } from '../engine/workflow.ts';
import { fetchPage } from '../providers/fetch/fetch-page.ts';
import { HostGate } from '../providers/fetch/host-gate.ts';
import { type ConfiguredModel, createLanguageModel } from '../providers/llm/create-language-model.ts';
import { createSearchProviders } from '../providers/search/create-search-providers.ts';
import type { Analyst } from '../research/analyst.ts';
import { ExtractiveAnalyst } from '../research/extractive/extractive-analyst.ts';
import { LlmAnalyst } from '../research/llm/llm-analyst.ts';
import type { ResearchDependencies } from '../research/research-dependencies.ts';
import type { ResearchSettings } from '../research/research-settings.ts';
import { researchWorkflow } from '../research/research-workflow.ts';
import type { Corpus } from '../store/store.ts';
import type { IndexProgress } from './document-folders.ts';

/** What research needs of the configuration: keys, prices and the fetch allow-list. */
export type ResearchConfig = Pick<QuarryConfig, 'providers' | 'price' | 'fetchAllow'>;

/** The analyst a session's settings ask for: a model when one is set, the extractive analyst otherwise. */
export function analystFor(settings: ResearchSettings, config: ResearchConfig): Analyst {
  if (!settings.model) return new ExtractiveAnalyst();
  const withTemperature = (model: ConfiguredModel): ConfiguredModel =>
    settings.temperature === undefined ? model : { ...model, temperature: settings.temperature };
  const main = withTemperature(createLanguageModel(settings.model, config));
  return new LlmAnalyst(
    main,
    settings.fastModel ? withTemperature(createLanguageModel(settings.fastModel, config)) : main,
  );
}

export interface ResearchRuntimeOptions {
  /** Resolves when these folders are indexed; searches wait for it (a server indexes in the background). */
  indexReady?: (
    folders: string[],
    signal?: AbortSignal,
    onProgress?: (progress: IndexProgress) => void,
  ) => Promise<void>;
}

/**
 * One gate for every fetch this process makes: research runs in parallel (several sessions, several
 * reads per iteration), and a site must see them as one polite client.
 */
const hostGate = new HostGate();

/** Wires the research workflow to real providers: the composition every entry point shares. */
export function createResearchDependencies(
  corpus: Corpus,
  config: ResearchConfig,
  options: ResearchRuntimeOptions = {},
): ResearchDependencies {
  return {
    analystFor: (settings) => analystFor(settings, config),
    searchProvidersFor: (settings) =>
      createSearchProviders({
        corpus,
        docs: settings.docs,
        web: settings.search,
        providers: config.providers,
        indexReady: options.indexReady,
      }),
    fetchPage: (url, signal) => fetchPage(url, { signal, allow: config.fetchAllow, gate: hostGate }),
    ...(options.indexReady ? { documentsReady: options.indexReady } : {}),
  };
}

export function createWorkflowRegistry(
  corpus: Corpus,
  config: ResearchConfig,
  options: ResearchRuntimeOptions = {},
): WorkflowRegistry {
  return new WorkflowRegistry([researchWorkflow(createResearchDependencies(corpus, config, options))]);
}
