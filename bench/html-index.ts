/**
 * Indexing real HTML documentation nobody here wrote, installed from Debian: the PostgreSQL 15 manual
 * (`postgresql-doc-15`, 1,173 pages) and the Python 3.11 documentation (`python3-doc`). Beside each
 * index time, the limit it is measured against: inserting the very passages it produced into a bare
 * FTS5 table of the same shape, in one transaction (what indexing would cost with free extraction).
 * Then searching the Python documentation with the labeled questions of bench/quality (people's
 * questions over real prose, where the generated corpus of corpus-index.ts has neither stop words
 * nor code), timed, with how often an answering page comes in the top ten.
 * Run alone: `node --import tsx bench/html-index.ts`.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { indexFolders } from '../src/providers/search/local-corpus/index-folders.ts';
import { LocalCorpusSearch } from '../src/providers/search/local-corpus/local-corpus-search.ts';
import { openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/store.ts';
import {
  formatBytes,
  formatMs,
  inPostgresSchema,
  median,
  percentile,
  pgBenchUrl,
  printTable,
  tempFolder,
  timeMs,
} from './bench-lib.ts';

const documentation = [
  { name: 'PostgreSQL 15 manual', folder: '/usr/share/doc/postgresql-doc-15/html', install: 'postgresql-doc-15' },
  {
    name: 'Python 3.11 docs',
    folder: '/usr/share/doc/python3-doc/html',
    install: 'python3-doc',
    questions: ['python-docs.json', 'python-docs-heldout.json'],
  },
];

interface Labeled {
  question: string;
  pages: string[];
}

function labeledQuestions(files: string[]): Labeled[] {
  return files.flatMap(
    (file) =>
      (JSON.parse(readFileSync(new URL(`quality/${file}`, import.meta.url), 'utf8')) as { questions: Labeled[] })
        .questions,
  );
}

/** Each question searched three times (the first with nothing counted yet), top ten pages. */
async function searchRow(store: Store, folder: string, questions: Labeled[]): Promise<string[]> {
  const search = new LocalCorpusSearch(store, [folder]);
  const root = realpathSync(folder);
  const times: number[] = [];
  let answered = 0;
  for (let round = 0; round < 3; round++) {
    for (const labeled of questions) {
      let results!: Awaited<ReturnType<LocalCorpusSearch['search']>>;
      times.push(await timeMs(async () => (results = await search.search(labeled.question, { maxResults: 10 }))));
      if (round > 0) continue;
      const pages = results.map((result) => relative(root, realpathSync(fileURLToPath(result.url))));
      if (labeled.pages.some((page) => pages.includes(page))) answered += 1;
    }
  }
  return [formatMs(median(times)), formatMs(percentile(times, 95)), `${answered} of ${questions.length}`];
}

/** Bytes and count of the HTML files below `folder`, following the links Debian's packages use. */
function htmlFiles(folder: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const entry of readdirSync(folder, { recursive: true, encoding: 'utf8' })) {
    if (!entry.endsWith('.html') || entry.split('/').some((part) => part.startsWith('_'))) continue;
    const info = statSync(join(folder, entry), { throwIfNoEntry: false });
    if (!info?.isFile()) continue;
    files += 1;
    bytes += info.size;
  }
  return { files, bytes };
}

/** The passages an index holds, inserted into a fresh FTS5 table of the same shape: the floor. */
function bareFtsInsertMs(databasePath: string): number {
  const source = new Database(databasePath, { readonly: true });
  const passages = source
    .prepare(
      `SELECT p.text, d.title, p.headings FROM corpus_passages p
       JOIN corpus_documents d ON d.id = p.document_id ORDER BY p.id`,
    )
    .all() as { text: string; title: string; headings: string }[];
  source.close();
  const bare = tempFolder('bare-fts');
  const target = new Database(join(bare.path, 'bare.db'));
  try {
    target.pragma('journal_mode = WAL');
    target.exec(
      "CREATE VIRTUAL TABLE fts USING fts5 (text, title, headings, content = '', contentless_delete = 1, tokenize = 'porter unicode61')",
    );
    const insert = target.prepare('INSERT INTO fts (rowid, text, title, headings) VALUES (?, ?, ?, ?)');
    const started = performance.now();
    target.transaction(() => {
      for (const [index, passage] of passages.entries()) {
        insert.run(index + 1, passage.text, passage.title, passage.headings);
      }
    })();
    return performance.now() - started;
  } finally {
    target.close();
    bare.remove();
  }
}

export async function run(): Promise<void> {
  const present = documentation.filter((set) => existsSync(set.folder));
  console.log(
    `\nHTML indexing inputs: ${
      present.map((set) => `${set.name} (${set.folder})`).join(', ') || 'none'
    }; ${availableParallelism()} extraction threads.`,
  );
  for (const set of documentation.filter((entry) => !present.includes(entry))) {
    console.log(`${set.name}: not installed (apt-get install ${set.install}); skipped.`);
  }
  const rows: string[][] = [];
  const searchRows: string[][] = [];
  for (const set of present) {
    const questions = set.questions ? labeledQuestions(set.questions) : [];
    const { files, bytes } = htmlFiles(set.folder);
    const database = tempFolder('html-index');
    try {
      const path = join(database.path, 'quarry.db');
      const store = await openStore({ db: path });
      let passages = 0;
      let pages = 0;
      const indexMs = await timeMs(async () => {
        const report = await indexFolders(store, [set.folder]);
        passages = report.passages;
        pages = report.added;
      });
      if (questions.length) searchRows.push([set.name, 'SQLite', ...(await searchRow(store, set.folder, questions))]);
      await store.close();
      const floorMs = bareFtsInsertMs(path);
      rows.push([
        set.name,
        'SQLite',
        `${pages} (${files} .html)`,
        formatBytes(bytes),
        String(passages),
        `${(indexMs / 1000).toFixed(1)} s`,
        `${(bytes / 2 ** 20 / (indexMs / 1000)).toFixed(1)} MB/s`,
        `${(floorMs / 1000).toFixed(2)} s`,
        `${(indexMs / floorMs).toFixed(1)}×`,
      ]);
    } finally {
      database.remove();
    }
    await inPostgresSchema(
      async (schema) => {
        const store = await openStore({ db: pgBenchUrl, schema });
        try {
          let report!: Awaited<ReturnType<typeof indexFolders>>;
          const indexMs = await timeMs(async () => {
            report = await indexFolders(store, [set.folder]);
          });
          rows.push([
            set.name,
            'PostgreSQL',
            `${report.added} (${files} .html)`,
            formatBytes(bytes),
            String(report.passages),
            `${(indexMs / 1000).toFixed(1)} s`,
            `${(bytes / 2 ** 20 / (indexMs / 1000)).toFixed(1)} MB/s`,
            '-',
            '-',
          ]);
          if (questions.length)
            searchRows.push([set.name, 'PostgreSQL', ...(await searchRow(store, set.folder, questions))]);
        } finally {
          await store.close();
        }
      },
      (reason) => rows.push([set.name, 'PostgreSQL', reason, '-', '-', '-', '-', '-', '-']),
    );
  }
  if (rows.length === 0) return;
  printTable(
    'Indexing real HTML documentation (extraction on every core) against inserting its passages into a bare FTS5 table',
    [
      'documentation',
      'store',
      'pages indexed',
      'HTML',
      'passages',
      'index time',
      'throughput',
      'bare FTS5 insert',
      'index / bare',
    ],
    rows,
  );
  if (searchRows.length === 0) return;
  printTable(
    `Searching it with the labeled questions of bench/quality (${labeledQuestions(['python-docs.json', 'python-docs-heldout.json']).length}, each three times; top ten pages)`,
    ['documentation', 'store', 'search median', 'search p95', 'answering page in the top ten'],
    searchRows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
