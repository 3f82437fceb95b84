import type { FetchedPage } from '../providers/fetch/fetch-page.ts';
import type { SearchProvider } from '../providers/search/search-provider.ts';
import type { Analyst } from './analyst.ts';
import type { ResearchSettings } from './research-settings.ts';

/**
 * What the research workflow needs from the outside world; tests pass fakes of the edges. The
 * session itself it reads and changes through its run (`ctx.session`, fenced by the lease).
 */
export interface ResearchDependencies {
  analystFor(settings: ResearchSettings): Analyst;
  searchProvidersFor(settings: ResearchSettings): SearchProvider[];
  fetchPage(url: string, signal: AbortSignal): Promise<FetchedPage>;
  /**
   * Resolves when the document folders are indexed (a server indexes in the background); while it
   * waits, `onProgress` hears how far indexing has come. Absent: folders are indexed beforehand.
   */
  documentsReady?(
    folders: string[],
    signal: AbortSignal,
    onProgress: (progress: { folder: string; done: number; total: number }) => void,
  ): Promise<void>;
}
