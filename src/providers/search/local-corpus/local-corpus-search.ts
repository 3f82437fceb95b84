import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { QuarryError } from '../../../shared/errors.ts';
import type { Corpus, PassageHit } from '../../../store/store.ts';
import type { ReadText, SearchOptions, SearchProvider, SearchResult } from '../search-provider.ts';
import { folderPrefix } from './index-folders.ts';

/** A piece of a result's content: where it starts in the content, and in the document's text. */
export interface ContentSegment {
  /** Offset in the result's `content`. */
  at: number;
  /** Offset in the document's extracted text. */
  start: number;
  headings: string;
}

/** What a local result carries besides its text: where the passage is, and how prose-like it is. */
export interface LocalResultMetadata {
  passageId: number;
  documentId: number;
  position: number;
  /** The page's next best passages (a page can answer in more than one place). */
  alsoAt: { position: number; headings: string }[];
  start: number;
  end: number;
  headings: string;
  linkDensity: number;
  navigation: boolean;
  score: number;
}

/** Characters of a page a result carries at most: its opening, and the matched passage with its neighbours. */
const CONTENT_CHARS = 5000;
/** How far back from a hit its section's start is looked for, in passages. */
const SECTION_LOOKBACK = 6;

/**
 * Pages ranked by their passages: the best passage's score, plus half the second's and a quarter of
 * the third's. A page with many passages on the question is more likely about it than a page that
 * mentions it once. Each page is represented by its best passage; `others` are its next best.
 */
export function rankDocuments(hits: readonly PassageHit[]): { hit: PassageHit; others: PassageHit[]; score: number }[] {
  const pages = new Map<number, PassageHit[]>();
  for (const hit of hits) pages.set(hit.documentId, [...(pages.get(hit.documentId) ?? []), hit]);
  return [...pages.values()]
    .map((passages) => {
      const sorted = [...passages].sort((a, b) => b.score - a.score || a.passageId - b.passageId);
      const score = (sorted[0]?.score ?? 0) + 0.5 * (sorted[1]?.score ?? 0) + 0.25 * (sorted[2]?.score ?? 0);
      return { hit: sorted[0]!, others: sorted.slice(1, 3), score: Number(score.toFixed(6)) };
    })
    .sort((a, b) => b.score - a.score || a.hit.passageId - b.hit.passageId);
}

/**
 * Searches the indexed passages of the given folders (all indexed documents when none): one result
 * per document, so a page is never read twice for one query; its snippet is the best passage. What
 * research reads of a result (`read`) is what a reader skims: the best passage in its section, with
 * the page's opening.
 */
export class LocalCorpusSearch implements SearchProvider {
  readonly name = 'local';
  readonly maxQueryChars = 1000;
  private readonly prefixes: string[];

  constructor(
    private readonly store: Corpus,
    private readonly folders: string[] = [],
    private readonly options: { ready?: (folders: string[], signal?: AbortSignal) => Promise<void> } = {},
  ) {
    this.prefixes = folders.map(folderPrefix);
  }

  async search(query: string, options: SearchOptions): Promise<SearchResult[]> {
    options.signal?.throwIfAborted();
    await this.options.ready?.(this.folders, options.signal);
    const hits = await this.store.searchPassages({
      query,
      limit: 100,
      pathPrefixes: this.prefixes.length ? this.prefixes : undefined,
    });
    return rankDocuments(hits)
      .slice(0, options.maxResults)
      .map(({ hit, others, score }) => {
        const metadata: LocalResultMetadata = {
          passageId: hit.passageId,
          documentId: hit.documentId,
          position: hit.position,
          alsoAt: others.map((other) => ({ position: other.position, headings: other.headings })),
          start: hit.start,
          end: hit.end,
          headings: hit.headings,
          linkDensity: hit.linkDensity,
          navigation: hit.navigation,
          score,
        };
        return {
          url: pathToFileURL(hit.path).href,
          title: hit.title,
          snippet: hit.text,
          provider: this.name,
          metadata: { ...metadata },
        };
      });
  }

  /**
   * A result's passage read in its place: see `readAround`. The result may come from a journal a
   * client sent (an imported session), so nothing in it is trusted as a capability: the document is
   * found by its path, which must lie in this search's folders (`FORBIDDEN` otherwise), and the
   * positions are only offsets into that document.
   */
  async read(result: SearchResult, signal?: AbortSignal): Promise<ReadText> {
    signal?.throwIfAborted();
    const path = this.readablePath(result.url);
    const metadata = (result.metadata ?? {}) as Partial<LocalResultMetadata>;
    const hit = (value: { position?: unknown; headings?: unknown } | undefined) => ({
      position: Number(value?.position),
      headings: typeof value?.headings === 'string' ? value.headings : '',
    });
    const hits = [hit(metadata), ...(Array.isArray(metadata.alsoAt) ? metadata.alsoAt.slice(0, 2).map(hit) : [])];
    const { content, segments } = await this.readAround(
      path,
      hits.filter(({ position }) => Number.isSafeInteger(position) && position >= 0),
    );
    return { text: content, segments };
  }

  /** The file a result's URL names, if it lies in this search's folders. */
  private readablePath(url: string): string {
    let path: string | null = null;
    try {
      path = url.startsWith('file:') ? resolve(fileURLToPath(url)) : null;
    } catch {
      path = null;
    }
    if (path === null || !this.prefixes.some((prefix) => path.startsWith(prefix)))
      throw new QuarryError('FORBIDDEN', `${url} is not a document in this session's folders.`, {
        details: { url },
      });
    return path;
  }

  /**
   * What a reader skims of a page for a query: the best passage, the page's opening (what the page
   * is about), the start of the passage's section (where a section states what it is about, often
   * a passage or more before the best match), the passages around it, then the same for the page's
   * next best passages; in page order, within the size cap.
   */
  private async readAround(
    path: string,
    hits: { position: number; headings: string }[],
  ): Promise<{ content: string; segments: ContentSegment[] }> {
    if (hits.length === 0) return { content: '', segments: [] };
    const windows = hits.map(({ position }) =>
      Array.from({ length: SECTION_LOOKBACK + 5 }, (_, index) => position - SECTION_LOOKBACK + index),
    );
    const positions = [...new Set([0, 1, 2, ...windows.flat()])].filter((position) => position >= 0);
    const passages = await this.store.readPassages({ path, positions });
    const byPosition = new Map(passages.map((passage) => [passage.position, passage]));
    // A section's start: back from a hit while the passages stay inside the hit's heading path.
    const sectionStart = ({ position: at, headings: path }: { position: number; headings: string }) => {
      let start = at;
      for (let position = at - 1; position >= at - SECTION_LOOKBACK; position--) {
        const headings = byPosition.get(position)?.headings;
        if (headings === undefined || !(path === headings || path.startsWith(`${headings} › `))) break;
        start = position;
      }
      return start;
    };
    const [best, ...others] = hits;
    const start = sectionStart(best!);
    const at = best!.position;
    const wanted = [at, 0, start, at + 1, at - 1, start + 1, 1, at + 2];
    for (const other of others) wanted.push(other.position, sectionStart(other), other.position + 1);
    wanted.push(at + 3, at - 2, at + 4);
    // In that order of importance, as long as they fit.
    const kept: PassageHit[] = [];
    let size = 0;
    // What a kept passage announces ("…without blocking updates while the index is rebuilt:") is
    // read with it even past the budget: a lead-in alone shows nothing.
    const announced = (position: number) => endsAnnouncing(byPosition.get(position - 1)?.text);
    for (const position of withAnnouncedNext(wanted, (at) => byPosition.get(at)?.text)) {
      const passage = byPosition.get(position);
      if (!passage || kept.includes(passage)) continue;
      const owed = announced(position) && kept.includes(byPosition.get(position - 1)!);
      if (kept.length > 0 && !owed && size + passage.text.length > CONTENT_CHARS) continue;
      kept.push(passage);
      size += passage.text.length + 2;
    }
    kept.sort((a, b) => a.position - b.position);
    const segments: ContentSegment[] = [];
    let content = '';
    for (const passage of kept) {
      if (content) content += '\n\n';
      segments.push({ at: content.length, start: passage.start, headings: passage.headings });
      content += passage.text;
    }
    return { content, segments };
  }
}

/**
 * Positions in reading order, each passage that ends announcing what follows ("…you can use
 * `m4exit`:") followed at once by the passage after it: the index often cuts a page right there,
 * before the definition or example it announces.
 */
export function withAnnouncedNext(
  positions: readonly number[],
  textAt: (position: number) => string | undefined,
): number[] {
  return positions.flatMap((position) => (endsAnnouncing(textAt(position)) ? [position, position + 1] : [position]));
}

/**
 * True when a passage's last paragraph is prose that ends on a colon ("The correct version of the
 * function reads:"), not a line of code that does ("def batched(iterable, n):", "else:"), which is
 * where the index cuts a long code block.
 */
export function endsAnnouncing(text: string | undefined): boolean {
  if (!text || !/:\s*$/.test(text)) return false;
  // Inside a code block: its fence is open.
  if ((text.match(/^\s*```/gm) ?? []).length % 2 === 1) return false;
  const line = text.trimEnd().split('\n').at(-1) ?? '';
  // Indented, a call or signature ("def batched(iterable, n):"), or a bare keyword ("else:").
  return !/^\s/.test(line) && !/\)\s*:$/.test(line) && !/^[a-z_]+:$/.test(line);
}
