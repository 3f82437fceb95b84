import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { checkWebProvider } from '../providers/search/create-search-providers.ts';
import { parseResearchSettings, type ResearchSettings } from '../research/research-settings.ts';
import { invalidInput, QuarryError } from '../shared/errors.ts';
import { resolveDocs } from './document-folders.ts';
import { libraryFolder } from './library.ts';
import type { ServiceContext } from './service-context.ts';

/**
 * The sources of a request: what it names, else the defaults — every folder the server allows (or
 * the configured default folders for the CLI) and the configured web providers. One place.
 */
export function requestSources(
  context: ServiceContext,
  request: { docs?: string[]; search?: string[]; settings?: Record<string, unknown> },
): { docs: string[]; search: string[] } {
  // Folders and providers named inside `settings` are requested the same way (and checked the same way).
  request = {
    ...request,
    docs: request.docs ?? stringList(request.settings?.docs, 'settings.docs'),
    search: request.search ?? stringList(request.settings?.search, 'settings.search'),
  };
  const useDefaults = request.docs === undefined && request.search === undefined;
  const library = libraryFolder(context.config, context.store.ownerId);
  // The CLI's defaults: the configured folders and the local user's library, once it exists.
  const defaultDocs =
    context.folders.kind === 'roots' ? undefined : [...context.config.docs, ...(existsSync(library) ? [library] : [])];
  const requested = useDefaults ? defaultDocs : (request.docs ?? []);
  const docs = resolveDocs(
    context.folders,
    context.folders.kind === 'any' ? requested?.map((entry) => inLibrary(entry, library)) : requested,
  );
  const search = useDefaults ? context.config.search : (request.search ?? []);
  for (const name of search) checkWebProvider(name, context.config.providers);
  return { docs, search };
}

/** For the CLI: `library` and `library/<id>` name the local user's library, unless such a folder is here. */
function inLibrary(entry: string, library: string): string {
  if (existsSync(entry) || !/^library(\/[^/]+)?\/?$/.test(entry)) return entry;
  return join(library, entry.slice('library'.length));
}

function stringList(value: unknown, field: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
    throw invalidInput(field, 'must be a list of strings');
  return value as string[];
}

/** A question or message within the configured size limit. */
export function checkQuestion(context: ServiceContext, text: string, field = 'question'): string {
  const trimmed = text.trim();
  if (!trimmed) throw invalidInput(field, 'must not be empty');
  const max = context.config.server.limits.questionChars;
  if (context.enforceLimits && trimmed.length > max) {
    throw new QuarryError('PAYLOAD_TOO_LARGE', `The ${field} is ${trimmed.length} characters; the limit is ${max}.`, {
      details: { field },
    });
  }
  if (trimmed.includes('\u0000')) throw invalidInput(field, 'must not contain NUL characters');
  return trimmed;
}

/** Settings with the configured model defaults filled in, validated (`INVALID_INPUT` names the field). */
export function researchSettings(
  context: ServiceContext,
  settings: Record<string, unknown> | undefined,
  sources: { docs: string[]; search: string[] },
): ResearchSettings {
  const { model, fastModel, clarify } = context.config;
  const parsed = parseResearchSettings(
    {
      ...(model ? { model } : {}),
      ...(fastModel ? { fastModel } : {}),
      ...(clarify ? { clarify } : {}),
      ...settings,
      ...sources,
    },
    { strict: true },
  );
  return context.enforceLimits ? withinBudgetCeilings(context, parsed) : parsed;
}

/**
 * A session's stored settings brought within this server's ceilings before a run starts (resume,
 * follow-up, fork, a Responses turn): a budget that is missing (removed, or never set by an
 * imported file) becomes the ceiling, one above it comes down to it. The raw settings as stored,
 * with only the budgets changed; the same object when nothing changes (so nothing is written).
 */
export function boundedSettings(
  context: Pick<ServiceContext, 'config' | 'enforceLimits'>,
  stored: Record<string, unknown>,
): Record<string, unknown> {
  if (!context.enforceLimits) return stored;
  const { tokenBudget, costBudgetUsd } = context.config.server.limits;
  const tokens = typeof stored.tokenBudget === 'number' ? Math.min(stored.tokenBudget, tokenBudget) : tokenBudget;
  const cost =
    costBudgetUsd === null
      ? stored.costBudgetUsd
      : typeof stored.costBudgetUsd === 'number'
        ? Math.min(stored.costBudgetUsd, costBudgetUsd)
        : costBudgetUsd;
  if (tokens === stored.tokenBudget && cost === stored.costBudgetUsd) return stored;
  return { ...stored, tokenBudget: tokens, ...(cost === undefined ? {} : { costBudgetUsd: cost }) };
}

/**
 * A server's ceilings on what one run may spend: a request may ask for less, never more
 * (`INVALID_INPUT` naming the ceiling); one that asks for nothing gets the ceiling.
 */
export function withinBudgetCeilings(context: ServiceContext, settings: ResearchSettings): ResearchSettings {
  const { tokenBudget, costBudgetUsd } = context.config.server.limits;
  if (settings.tokenBudget !== undefined && settings.tokenBudget > tokenBudget)
    throw invalidInput('settings.tokenBudget', `may be at most ${tokenBudget} tokens on this server`);
  if (costBudgetUsd !== null && settings.costBudgetUsd !== undefined && settings.costBudgetUsd > costBudgetUsd)
    throw invalidInput('settings.costBudgetUsd', `may be at most $${costBudgetUsd} on this server`);
  return {
    ...settings,
    tokenBudget: settings.tokenBudget ?? tokenBudget,
    ...(costBudgetUsd !== null ? { costBudgetUsd: settings.costBudgetUsd ?? costBudgetUsd } : {}),
  };
}
