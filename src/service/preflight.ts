import { createLanguageModel } from '../providers/llm/create-language-model.ts';
import type { ResearchSettings } from '../research/research-settings.ts';
import { QuarryError } from '../shared/errors.ts';
import type { ServiceContext } from './service-context.ts';

/** The models a server's users may choose: the configured ones and the operator's list. */
export function offeredModels(context: Pick<ServiceContext, 'config'>): string[] {
  const { model, fastModel, server } = context.config;
  return [...new Set([model, fastModel, ...server.models].filter((name): name is string => Boolean(name)))];
}

/**
 * Checks that the models a session's settings name can be used here (a known provider, its key
 * present) before anything about the session changes: `INVALID_INPUT` for an unknown provider,
 * `MODEL_NOT_CONFIGURED` naming the missing key. On a server (`enforceLimits`) a model must also be
 * one the operator offers (`offeredModels`), since the server's keys pay for it: `FORBIDDEN`
 * otherwise. Run, resume, ask and the API all call this first.
 */
export function checkModels(
  context: Pick<ServiceContext, 'config' | 'enforceLimits'>,
  settings: ResearchSettings,
): void {
  for (const [field, name] of [
    ['model', settings.model],
    ['fastModel', settings.fastModel],
  ] as const) {
    if (!name) continue;
    if (context.enforceLimits && !offeredModels(context).includes(name)) {
      const offered = offeredModels(context);
      throw new QuarryError(
        'FORBIDDEN',
        `This server does not offer the model "${name}"; ${offered.length ? `choose one of: ${offered.join(', ')}` : 'it offers none (research runs without a model)'}.`,
        { details: { field: `settings.${field}` } },
      );
    }
    createLanguageModel(name, context.config);
  }
}
