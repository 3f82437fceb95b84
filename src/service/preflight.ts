import { createLanguageModel } from '../providers/llm/create-language-model.ts';
import type { ResearchSettings } from '../research/research-settings.ts';
import type { ServiceContext } from './service-context.ts';

/**
 * Checks that the models a session's settings name can be used here (a known provider, its key
 * present) before anything about the session changes: `INVALID_INPUT` for an unknown provider,
 * `MODEL_NOT_CONFIGURED` naming the missing key. Run, resume, ask and the API all call this first.
 */
export function checkModels(context: Pick<ServiceContext, 'config'>, settings: ResearchSettings): void {
  if (settings.model) createLanguageModel(settings.model, context.config);
  if (settings.fastModel) createLanguageModel(settings.fastModel, context.config);
}
