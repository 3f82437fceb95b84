/**
 * Local corpus: indexing throughput (MB of text per second) and search latency over a generated
 * corpus of generated Markdown, at two sizes (CORPUS_MB, default 20 and 50 MB) so that a search that
 * slows down as the corpus grows shows. Run alone: `node --import tsx bench/corpus-index.ts`.
 */
type StoreOptions = Omit<OpenStoreOptions, 'db'>;

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { indexFolders } from '../src/providers/search/local-corpus/index-folders.ts';
import { LocalCorpusSearch } from '../src/providers/search/local-corpus/local-corpus-search.ts';
import { type OpenStoreOptions, openDriver, openStore } from '../src/store/open-store.ts';
import { formatMs, median, percentile, pgBenchUrl, printTable, seededRandom, tempFolder, timeMs } from './bench-lib.ts';

const FILE_BYTES = 100 * 1024;

/**
 * Text with a natural-language-like vocabulary: 30,000 made-up words drawn with a Zipf-like (log-
 * uniform rank) distribution, so common words are everywhere and most words are rare, as in real
 * documents. (A small vocabulary would make every query match every passage.)
 */
export function zipfText(random: () => number) {
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ne',
    'tu',
    'ra',
    'si',
    'po',
    'de',
    'ga',
    'vu',
    'ze',
    'ti',
    'ba',
    'no',
    'ri',
    'sa',
    'le',
    'mo',
    'ku',
  ];
  const vocabulary = Array.from({ length: 30_000 }, (_, index) => {
    let word = '';
    for (let rest = index + 1; rest > 0; rest = Math.floor(rest / syllables.length))
      word += syllables[rest % syllables.length];
    return word;
  });
  const word = () =>
    vocabulary[Math.min(vocabulary.length - 1, Math.floor(Math.exp(random() * Math.log(vocabulary.length))) - 1)]!;
  return {
    paragraph(bytes: number): string {
      const words: string[] = [];
      for (let length = 0; length < bytes; ) {
        const next = word();
        words.push(next);
        length += next.length + 1;
      }
      return `${words.join(' ')}.`;
    },
    /** A query of mid-frequency words, like a person's keywords. */
    query(): string {
      return Array.from({ length: 3 }, () => vocabulary[100 + Math.floor(random() * 5_000)]).join(' ');
    },
  };
}

export function generateCorpus(folder: string, megabytes: number): number {
  const generator = zipfText(seededRandom(7));
  let bytes = 0;
  for (let index = 0; bytes < megabytes * 1024 * 1024; index++) {
    const sub = join(folder, `part-${Math.floor(index / 100)}`);
    mkdirSync(sub, { recursive: true });
    const paragraphs = Array.from({ length: Math.ceil(FILE_BYTES / 700) }, () => generator.paragraph(700));
    const text = `# Report ${index}\n\n${paragraphs.join('\n\n')}\n`;
    writeFileSync(join(sub, `report-${index}.md`), text);
    bytes += text.length;
  }
  return bytes;
}

async function measure(
  label: string,
  location: string,
  options: StoreOptions,
  folder: string,
  bytes: number,
  rows: string[][],
): Promise<void> {
  const store = await openStore({ db: location, ...options });
  try {
    let report!: Awaited<ReturnType<typeof indexFolders>>;
    const indexMs = await timeMs(async () => {
      report = await indexFolders(store, [folder]);
    });
    const search = new LocalCorpusSearch(store, [folder]);
    const queries = zipfText(seededRandom(11));
    const times: number[] = [];
    for (let query = 0; query < 200; query++) {
      const words = queries.query();
      times.push(await timeMs(() => search.search(words, { maxResults: 10 })));
    }
    const megabytes = bytes / 1024 / 1024;
    rows.push([
      label,
      `${megabytes.toFixed(0)} MB`,
      String(report.added),
      String(report.passages),
      `${(indexMs / 1000).toFixed(1)} s`,
      `${(megabytes / (indexMs / 1000)).toFixed(2)} MB/s`,
      formatMs(median(times)),
      formatMs(percentile(times, 95)),
    ]);
  } finally {
    await store.close();
  }
}

/** Corpus sizes measured, in MB: `CORPUS_MB=20,50` (default), so growth with the corpus shows. */
function corpusSizes(): number[] {
  const sizes = (process.env.CORPUS_MB ?? '20,50').split(',').map(Number);
  if (sizes.some((size) => !Number.isFinite(size) || size <= 0))
    throw new Error(`CORPUS_MB must be sizes in MB, like 20,50`);
  return sizes;
}

export async function run(): Promise<void> {
  const rows: string[][] = [];
  const sizes = corpusSizes();
  console.log(
    `\nCorpus benchmark inputs: generated Markdown of ${sizes.join(' and ')} MB (CORPUS_MB), 200 queries of 3 words.`,
  );
  for (const megabytes of sizes) {
    const corpus = tempFolder('corpus');
    try {
      const bytes = generateCorpus(corpus.path, megabytes);
      const database = tempFolder('corpus-db');
      try {
        await measure('SQLite (FTS5, bm25)', join(database.path, 'quarry.db'), {}, corpus.path, bytes, rows);
      } finally {
        database.remove();
      }
      const schema = `quarry_bench_${Math.random().toString(36).slice(2, 8)}`;
      try {
        await measure('PostgreSQL (tsvector, GIN)', pgBenchUrl, { schema }, corpus.path, bytes, rows);
      } catch (error) {
        rows.push(['PostgreSQL', `skipped: ${(error as Error).message}`, '-', '-', '-', '-', '-', '-']);
      } finally {
        const driver = await openDriver(pgBenchUrl, { schema }).catch(() => null);
        await driver?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
        await driver?.close();
      }
    } finally {
      corpus.remove();
    }
  }
  printTable(
    'Local corpus: indexing and search (200 queries of 3 words, top 10)',
    ['store', 'corpus', 'files', 'passages', 'index time', 'throughput', 'search median', 'search p95'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
