import type { ProviderSettings } from '../../config/quarry-config.ts';
import type { Clock } from '../../shared/clock.ts';
import { QuarryError } from '../../shared/errors.ts';
import type { Corpus } from '../../store/store.ts';
import { BraveSearch } from './brave/brave-search.ts';
import { ExaSearch } from './exa/exa-search.ts';
import { JinaSearch } from './jina/jina-search.ts';
import { LocalCorpusSearch } from './local-corpus/local-corpus-search.ts';
import type { SearchProvider } from './search-provider.ts';
import { SearxngSearch } from './searxng/searxng-search.ts';
import { TavilySearch } from './tavily/tavily-search.ts';

export const webProviderNames = ['searxng', 'tavily', 'brave', 'exa', 'jina'] as const;
export type WebProviderName = (typeof webProviderNames)[number];

/** The setting each web provider needs, as the environment names it (for messages). */
const requirements: Record<WebProviderName, string> = {
  searxng: 'SEARXNG_URL',
  tavily: 'TAVILY_API_KEY',
  brave: 'BRAVE_API_KEY',
  exa: 'EXA_API_KEY',
  jina: 'JINA_API_KEY',
};

function credential(providers: ProviderSettings, name: WebProviderName): string | undefined {
  return name === 'searxng' ? providers.searxng.url : providers[name].apiKey;
}

/** Web providers whose key (or address) is configured. */
export function configuredWebProviders(providers: ProviderSettings): WebProviderName[] {
  return webProviderNames.filter((name) => Boolean(credential(providers, name)));
}

/** Checks a provider name and its key; `INVALID_INPUT` naming what is missing. */
export function checkWebProvider(name: string, providers: ProviderSettings): WebProviderName {
  if (!(webProviderNames as readonly string[]).includes(name)) {
    throw new QuarryError(
      'INVALID_INPUT',
      `Unknown search provider "${name}". Use one of: local, ${webProviderNames.join(', ')}.`,
      { details: { field: 'search' } },
    );
  }
  const provider = name as WebProviderName;
  if (!credential(providers, provider)) {
    throw new QuarryError(
      'INVALID_INPUT',
      `The ${provider} search provider needs ${requirements[provider]} in the environment.`,
      { details: { field: 'search' } },
    );
  }
  return provider;
}

/** Builds one web provider from the configured keys. */
export function createWebProvider(
  name: string,
  providers: ProviderSettings,
  options: { clock?: Clock } = {},
): SearchProvider {
  const provider = checkWebProvider(name, providers);
  const retry = { clock: options.clock };
  switch (provider) {
    case 'searxng':
      return new SearxngSearch(providers.searxng.url!, retry);
    case 'tavily':
      return new TavilySearch(providers.tavily.apiKey!, providers.tavily.baseUrl, retry);
    case 'brave':
      return new BraveSearch(providers.brave.apiKey!, providers.brave.baseUrl, retry);
    case 'exa':
      return new ExaSearch(providers.exa.apiKey!, providers.exa.baseUrl, retry);
    case 'jina':
      return new JinaSearch(providers.jina.apiKey!, providers.jina.baseUrl, retry);
  }
}

/** The providers of a run: the local corpus over `docs` (when given) and the named web providers. */
export function createSearchProviders(options: {
  corpus: Corpus;
  docs: string[];
  web: string[];
  providers: ProviderSettings;
  /** Resolves when the folders are indexed; the local corpus waits for it before searching. */
  indexReady?: (folders: string[], signal?: AbortSignal) => Promise<void>;
}): SearchProvider[] {
  const providers: SearchProvider[] = [];
  if (options.docs.length > 0) {
    providers.push(new LocalCorpusSearch(options.corpus, options.docs, { ready: options.indexReady }));
  }
  for (const name of options.web) providers.push(createWebProvider(name, options.providers));
  return providers;
}
