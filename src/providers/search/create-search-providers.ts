import { QuarryError } from '../../store/errors.ts';
import type { Store } from '../../store/store.ts';
import { BraveSearch } from './brave/brave-search.ts';
import { ExaSearch } from './exa/exa-search.ts';
import { JinaSearch } from './jina/jina-search.ts';
import { LocalCorpusSearch } from './local-corpus/local-corpus-search.ts';
import type { SearchProvider } from './search-provider.ts';
import { SearxngSearch } from './searxng/searxng-search.ts';
import { TavilySearch } from './tavily/tavily-search.ts';

export const webProviderNames = ['searxng', 'tavily', 'brave', 'exa', 'jina'] as const;
export type WebProviderName = (typeof webProviderNames)[number];

/** What each web provider needs from the environment (keys never leave the environment). */
const requirements: Record<WebProviderName, string> = {
  searxng: 'SEARXNG_URL',
  tavily: 'TAVILY_API_KEY',
  brave: 'BRAVE_API_KEY',
  exa: 'EXA_API_KEY',
  jina: 'JINA_API_KEY',
};

/** Web providers whose settings are present in the environment. */
export function configuredWebProviders(env: NodeJS.ProcessEnv = process.env): WebProviderName[] {
  return webProviderNames.filter((name) => Boolean(env[requirements[name]]));
}

/** Builds one web provider from the environment; a missing key is a clear `INVALID_INPUT`. */
export function createWebProvider(name: string, env: NodeJS.ProcessEnv = process.env): SearchProvider {
  if (!(webProviderNames as readonly string[]).includes(name)) {
    throw new QuarryError('INVALID_INPUT', `Unknown search provider "${name}". Use one of: local, ${webProviderNames.join(', ')}.`, { details: { field: 'search' } });
  }
  const provider = name as WebProviderName;
  const setting = env[requirements[provider]];
  if (!setting) {
    throw new QuarryError('INVALID_INPUT', `The ${provider} search provider needs ${requirements[provider]} in the environment.`, { details: { field: 'search' } });
  }
  switch (provider) {
    case 'searxng':
      return new SearxngSearch(setting);
    case 'tavily':
      return new TavilySearch(setting, env.TAVILY_BASE_URL);
    case 'brave':
      return new BraveSearch(setting, env.BRAVE_BASE_URL);
    case 'exa':
      return new ExaSearch(setting, env.EXA_BASE_URL);
    case 'jina':
      return new JinaSearch(setting, env.JINA_BASE_URL);
  }
}

/** The providers of a run: the local corpus over `docs` (when given) and the named web providers. */
export function createSearchProviders(options: { store: Store; docs: string[]; web: string[]; env?: NodeJS.ProcessEnv }): SearchProvider[] {
  const providers: SearchProvider[] = [];
  if (options.docs.length > 0) providers.push(new LocalCorpusSearch(options.store, options.docs));
  for (const name of options.web) providers.push(createWebProvider(name, options.env));
  return providers;
}
