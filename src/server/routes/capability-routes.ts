import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import { QUARRY_VERSION } from '../../config/version.ts';
import { configuredWebProviders } from '../../providers/search/create-search-providers.ts';
import { researchSettingsSchema } from '../../research/research-settings.ts';
import { LIBRARY_FILE_BYTES, libraryRootName } from '../../service/library.ts';
import { offeredModels } from '../../service/preflight.ts';
import type { AppEnv, ServerDependencies } from '../server-env.ts';
import { throwValidationError } from '../validation-hook.ts';
import { capabilitiesSchema } from '../wire.ts';

const route = createRoute({
  method: 'get',
  path: '/',
  tags: ['server'],
  summary: 'What this server can do: analyst and model, search providers, document folders, indexing, limits',
  responses: { 200: { description: 'Capabilities', content: { 'application/json': { schema: capabilitiesSchema } } } },
});

const settingLimit = (name: 'maxIterations' | 'queriesPerIteration' | 'sourcesPerQuery') =>
  researchSettingsSchema.shape[name].unwrap().maxValue ?? 0;

/** `GET /api/capabilities`: read from the configuration the server started with, never the environment. */
export function capabilityRoutes(dependencies: ServerDependencies) {
  return new OpenAPIHono<AppEnv>({ defaultHook: throwValidationError }).openapi(route, (c) => {
    const { config, indexer } = dependencies;
    // The user's own folders: the server's, and their library once they have one.
    const { folders } = c.get('context');
    const status = indexer.status();
    return c.json(
      {
        version: QUARRY_VERSION,
        analyst: config.model
          ? { kind: 'llm' as const, model: config.model, fastModel: config.fastModel }
          : { kind: 'extractive' as const, model: null, fastModel: null },
        models: offeredModels(dependencies),
        searchProviders: configuredWebProviders(config.providers),
        documentFolders: folders.kind === 'roots' ? folders.roots : [],
        defaultSearch: config.search,
        library: {
          root: libraryRootName(folders, config, c.get('context').store.ownerId),
          fileBytes: LIBRARY_FILE_BYTES,
          limitBytes: config.server.limits.libraryBytes,
        },
        indexing: { state: status.state, done: status.done, total: status.total, error: status.error },
        runner: Boolean(dependencies.runner),
        auth: c.get('auth'),
        limits: {
          maxIterations: settingLimit('maxIterations'),
          maxQueriesPerIteration: settingLimit('queriesPerIteration'),
          maxSourcesPerQuery: settingLimit('sourcesPerQuery'),
          questionChars: config.server.limits.questionChars,
          activeRuns: config.server.limits.activeRuns,
          bodyBytes: 1024 * 1024,
          streams: config.server.limits.streams,
          importBytes: config.server.importBytes,
          tokenBudget: config.server.limits.tokenBudget,
          costBudgetUsd: config.server.limits.costBudgetUsd,
        },
      },
      200,
    );
  });
}
