/**
 * Research quality of the offline (extractive) analyst on labeled questions over real documentation
 * nobody here wrote, of different origins (bench/quality/*.json: Python's and Django's Sphinx docs, Git's
 * AsciiDoc manual pages, Node.js's API pages, GNU M4's Texinfo manual, the Debian handbook, and the
 * PostgreSQL manual, which is never tuned on). Each set is
 * split into a dev half (what tuning may look at) and a test half (what it may not): questions
 * alternate dev, test in file order, unless the set says otherwise (`split`). Both halves print.
 *
 * Beside Quarry, in the same run, a plain search box: SQLite FTS5 over whole pages (title weighted
 * 10:1, bm25, stop words dropped, words OR-ed), the ten lines anyone would write. Printed per half:
 *   - baseline top-1 / top-3: the answering page is the box's first / among its first three results;
 *   - first search rank 1: Quarry's first search step (read from its journal) ranks an answering page first;
 *   - cited first / cited: the report's first source / any source is an answering page;
 *   - answer phrase: the report holds a phrase of an answering page that carries the answer;
 *   - where it was lost, when the report does not hold it (read from the journal): in a passage the
 *     research noted but did not quote / in what it read of a page but in none of its notes / in a part
 *     of an answering page it did not read (it read others) / in no answering page it read;
 *   - navigation pages cited, identifier headings (a section titled with an id, anchor or signature),
 *     repeated sentences (one sentence in two quotes of a report, or in a quote and its own words), quotes
 *     that end on a colon (a lead-in quoted without what it announces): all should be 0;
 *   - time per question, Quarry's run (a fresh process) against the box's query.
 * Every question is researched through the built executable (`quarry --json run`), as a user runs it.
 *
 *   npm run bench -- quality                  every set
 *   QUALITY_SET=git-docs QUALITY_LIMIT=10     one set, its first questions
 *   QUALITY_HALF=dev                          one half only
 *   QUALITY_BUILD=/tmp/before                 another checkout's build (bin/, dist/) instead of this one
 *   QUALITY_KEEP=/tmp/kept                    keep each set's store and journals there (quarry show, export)
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { parseHTML } from 'linkedom';
import { listedSources, reportBody, unquotedText } from '../src/research/quoted-report.ts';
import { openStore } from '../src/store/open-store.ts';
import { envInteger, median } from './bench-lib.ts';

interface LabeledQuestion {
  question: string;
  /** Pages (relative to the corpus) that answer it. */
  pages: string[];
  /** Phrases of those pages that carry the answer: a report answers when it holds any of them. */
  phrases: string[];
}

export interface QuestionSet {
  corpus: string;
  package: string;
  /** Every question in one half (a set kept only for checking generalization); default: alternate. */
  split?: 'dev' | 'test';
  /** Files that are the same page as another (`git-add.txt` is `git-add.html`'s source). */
  aliases?: { from: string; to: string }[];
  questions: LabeledQuestion[];
}

export type Half = 'dev' | 'test';

/**
 * Where a report's missing answer phrase was: in a passage noted but not quoted; in what was read of a
 * page, in no note; in a part of an answering page that was not read (the page was); in no page read.
 */
type Lost = 'noted' | 'read' | 'part' | 'unread';

interface Outcome {
  half: Half;
  question: string;
  phrase: boolean;
  cited: boolean;
  first: boolean;
  searchFirst: boolean;
  /** Quarry's first search has an answering page among its first five pages. */
  searchTop5: boolean;
  /** The pages that answer the question (the label's). */
  answering: string[];
  /** The answer phrase in the report's first section (its answer). */
  phraseFirst: boolean;
  /** Characters of the report's first section and of its body: what a reader reads to find the answer. */
  length: { first: number; body: number };
  /** Where the research had the answer phrase it did not quote (from its journal); null when quoted. */
  lost: Lost | null;
  baselineTop1: boolean;
  baselineTop3: boolean;
  /** The passage box: its best 1, 3 and 5 passages hold an answer phrase. */
  passageTop: [boolean, boolean, boolean];
  /** Quotes and sentences of the report's body that are not word for word in the document they cite. */
  unquoted: string[];
  navigation: string[];
  codeHeadings: string[];
  repeatedSentences: number;
  cutLeadIns: number;
  sources: string[];
  ms: number;
  baselineMs: number;
  error?: string;
}

const root = fileURLToPath(new URL('../', import.meta.url));
let bin = join(root, 'bin', 'quarry');

/**
 * A copy of the built command to measure: a build made while the benchmark runs (by the tests, by
 * `npm run build`) would otherwise change what the later questions run.
 */
function snapshotBuild(from = root): string {
  const copy = mkdtempSync(join(tmpdir(), 'quarry-bench-build-'));
  cpSync(join(from, 'bin'), join(copy, 'bin'), { recursive: true });
  cpSync(join(from, 'dist'), join(copy, 'dist'), { recursive: true });
  cpSync(join(from, 'package.json'), join(copy, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}
const SETS = [
  'python-docs',
  'python-docs-heldout',
  'git-docs',
  'node-docs',
  'm4-docs',
  'debian-handbook',
  'django-docs',
  'postgresql-docs',
];

/** Lower case, one space, straight quotes, no Markdown emphasis or escapes: text as a reader sees it. */
export function readable(text: string): string {
  return text
    .replace(/\\([\\`*_{}[\]()#+\-.!>=|])/g, '$1')
    .replace(/[*`]/g, '')
    .replace(/[’‘]/g, "'")
    .replace(/[“”]/g, '"')
    .replace(/\s+/g, ' ')
    .toLowerCase();
}

/**
 * The sources of a report's Sources list, as file paths. A Sphinx page's reStructuredText copy
 * (`_sources/library/re.rst.txt`) counts as the page it was built into (`library/re.html`).
 */
export function reportSources(report: string): string[] {
  const list = report.split(/^## Sources\s*$/m)[1] ?? '';
  return [...list.matchAll(/^\d+\.\s.*?<([^>]+)>\s*$/gm)].map((match) =>
    decodeURIComponent(match[1]!.replace(/^file:\/\//, '')).replace(/\/_sources\/(.+)\.rst\.txt$/, '/$1.html'),
  );
}

/** A page as the labels name it: relative to the corpus, with the set's aliases applied. */
export function pageOf(set: QuestionSet, path: string): string {
  let page = relative(set.corpus, path);
  for (const alias of set.aliases ?? []) page = page.replace(new RegExp(alias.from), alias.to);
  return page;
}

/** Index pages by name wherever they are. */
const indexNames = /(^|\/)(genindex[^/]*|py-modindex|modindex|bookindex)\.html$/;
/**
 * A manual's front pages by name, at its top only: below it, `index.html` and `search.html` are often
 * chapters of their own (Django's `ref/contrib/admin/index.html`, `topics/db/search.html`; Python's
 * `installing/index.html`), judged by their links like any page.
 */
const frontNames = /^(contents|search|index|all)\.html$/;

/** True for index pages, tables of contents and link lists: judged from the HTML itself. */
function isNavigationPage(corpus: string, source: string, cache: Map<string, boolean>): boolean {
  const path = join(corpus, source);
  const known = cache.get(path);
  if (known !== undefined) return known;
  let navigation = indexNames.test(source) || frontNames.test(source);
  if (!navigation && path.endsWith('.html') && existsSync(path)) {
    const { document } = parseHTML(readFileSync(path, 'utf8'));
    const main = document.querySelector('[role="main"]') ?? document.querySelector('.body') ?? document.body;
    const text = (main?.textContent ?? '').replace(/\s+/g, ' ').length;
    const links = [...(main?.querySelectorAll('a') ?? [])].reduce(
      (sum, link) => sum + (link.textContent ?? '').replace(/\s+/g, ' ').length,
      0,
    );
    navigation = text > 0 && links / text > 0.5;
  }
  cache.set(path, navigation);
  return navigation;
}

/**
 * Section titles that are code, not words: requirement ids, anchors, call signatures, paths, shell
 * commands and prompts, option names, lines of code.
 */
function codeHeadings(report: string): string[] {
  return [...reportBody(report).matchAll(/^#{2,4} (.+)$/gm)]
    .map((match) => match[1]!.trim())
    .filter((heading) => heading !== 'Sources' && heading !== 'Overview')
    .filter(
      (heading) =>
        /^[A-Z]+-\d{3,}(-\d+)*/.test(heading) ||
        /^#|^[\w.]+#[\w-]+$/.test(heading) ||
        /^[\w.$]+\([^)]*\)\s*$/.test(heading) ||
        /^[\w./-]+\.(html|txt|md)$/.test(heading) ||
        /^(?:\$|%|#|>>>)\s|^-{1,2}\w|[{};=]|`/.test(heading) ||
        !/[\p{L}]{2,}/u.test(heading),
    );
}

/** The report's first section: from its first level-2 heading to the next one (its answer). */
function firstSection(report: string): string {
  const body = reportBody(report);
  const start = body.search(/^## /m);
  if (start === -1) return '';
  const rest = body.slice(start + 3);
  const next = rest.search(/^## /m);
  return next === -1 ? rest : rest.slice(0, next);
}

/**
 * Sentences (of 6 words or more) that two parts of a report's prose both hold: two quoted passages,
 * or a passage and the report's own words. A passage that repeats a sentence of its own (the Node
 * manual's list of HTTP/2 error kinds says "These will be reported using either a synchronous throw
 * or via an 'error' event" twice) is its document's words, quoted whole: it counts once.
 */
function repeatedSentences(report: string): number {
  // Attribution lines ("— page › section [1]") end each quote and say where it is (twice when two
  // quotes share a section): they split the prose into parts and are not counted.
  const parts = reportBody(report)
    .replace(/\[\d+\]/g, '')
    .split(/^— .*$/m);
  const counts = new Map<string, number>();
  for (const part of parts) {
    const keys = new Set<string>();
    for (const sentence of part.split(/(?<=[.!?])\s+/)) {
      const key = readable(sentence)
        .replace(/[^\p{L}\p{N} ]/gu, '')
        .trim();
      if (key.split(' ').length >= 6) keys.add(key);
    }
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts.values()].filter((count) => count > 1).length;
}

/**
 * Quotes that end on a colon: a lead-in ("…use the builtin `regexp`:") quoted without what it
 * announces (issue 42 asks that it bring it).
 */
function cutLeadIns(report: string): number {
  return reportBody(report)
    .split(/^— .*$/m)
    .map((part) =>
      part
        .split('\n')
        .filter((line) => line.startsWith('>'))
        .map((line) => line.replace(/^>\s?/, '').trim())
        .filter(Boolean)
        .at(-1),
    )
    .filter((last) => last !== undefined && /:$/.test(last)).length;
}

const baselineStopWords = new Set(
  'a an and are as at be but by can could do does did for from has have how i in into is it its me my of on or should so that the their them then there these they this to was we were what when where which who why will with would you your'.split(
    ' ',
  ),
);

/** The plain search box: every HTML page of the corpus in an FTS5 table, title and text. */
class PageSearch {
  private readonly db = new BetterSqlite3(':memory:');

  constructor(corpus: string) {
    this.db.exec("CREATE VIRTUAL TABLE pages USING fts5(path UNINDEXED, title, body, tokenize = 'porter')");
    const insert = this.db.prepare('INSERT INTO pages (path, title, body) VALUES (?, ?, ?)');
    const files = (readdirSync(corpus, { recursive: true }) as string[]).filter((file) => file.endsWith('.html'));
    this.db.transaction(() => {
      for (const file of files) {
        const { document } = parseHTML(readFileSync(join(corpus, file), 'utf8'));
        for (const element of document.querySelectorAll('script, style')) element.remove();
        insert.run(file, document.title ?? '', document.body?.textContent ?? '');
      }
    })();
  }

  /** The pages best matching the question's words, best first. */
  search(question: string, limit = 3): string[] {
    const words = (question.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).filter(
      (word) => word.length > 1 && !baselineStopWords.has(word),
    );
    if (words.length === 0) return [];
    const match = [...new Set(words)].map((word) => `"${word}"`).join(' OR ');
    return (
      this.db
        .prepare('SELECT path FROM pages WHERE pages MATCH ? ORDER BY bm25(pages, 0, 10, 1) LIMIT ?')
        .all(match, limit) as { path: string }[]
    ).map((row) => row.path);
  }

  close(): void {
    this.db.close();
  }
}

/**
 * The passage box: the same FTS5 search as the page box, over the passages Quarry indexed instead of
 * whole pages (the HTML pages' passages, title weighted 10:1, bm25), and the indexed text of every
 * document, for checking that what a report quotes is the document's own words.
 */
class PassageSearch {
  private readonly db = new BetterSqlite3(':memory:');
  /** Each document's indexed text (its passages in order), by path. */
  readonly texts = new Map<string, string>();

  constructor(store: string) {
    this.db.exec("CREATE VIRTUAL TABLE passages USING fts5(path UNINDEXED, title, body, tokenize = 'porter')");
    const source = new BetterSqlite3(store, { readonly: true });
    const rows = source
      .prepare(
        `SELECT d.path, d.title, p.text FROM corpus_passages p JOIN corpus_documents d ON d.id = p.document_id
         ORDER BY d.path, p.position`,
      )
      .all() as { path: string; title: string; text: string }[];
    source.close();
    const insert = this.db.prepare('INSERT INTO passages (path, title, body) VALUES (?, ?, ?)');
    this.db.transaction(() => {
      for (const row of rows) {
        this.texts.set(row.path, `${this.texts.get(row.path) ?? ''}\n\n${row.text}`);
        if (row.path.endsWith('.html')) insert.run(row.path, row.title, row.text);
      }
    })();
  }

  /** The passages best matching the question's words, best first (their text). */
  search(question: string, limit = 5): string[] {
    const words = (question.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).filter(
      (word) => word.length > 1 && !baselineStopWords.has(word),
    );
    if (words.length === 0) return [];
    const match = [...new Set(words)].map((word) => `"${word}"`).join(' OR ');
    return (
      this.db
        .prepare('SELECT body FROM passages WHERE passages MATCH ? ORDER BY bm25(passages, 0, 10, 1) LIMIT ?')
        .all(match, limit) as { body: string }[]
    ).map((row) => row.body);
  }

  close(): void {
    this.db.close();
  }
}

/** Runs one research through the built executable; resolves with the report and the session id. */
function research(
  home: string,
  corpus: string,
  question: string,
): Promise<{ report: string; sessionId: string | null; ms: number; error?: string }> {
  return new Promise((resolvePromise) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, '--json', 'run', question, '--docs', corpus], {
      env: { PATH: process.env.PATH, HOME: home, QUARRY_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', () => {
      const ms = performance.now() - started;
      const lines = stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          try {
            return JSON.parse(line) as { type?: string; report?: string | null; sessionId?: string };
          } catch {
            return {};
          }
        });
      const sessionId = lines.find((line) => line.sessionId)?.sessionId ?? null;
      const result = lines.find((line) => line.type === 'result');
      if (result?.report) resolvePromise({ report: result.report, sessionId, ms });
      else resolvePromise({ report: '', sessionId, ms, error: stderr.trim().split('\n').at(-1) ?? 'no report' });
    });
  });
}

/**
 * From each session's journal: the pages of its first search step, best first (file paths), and
 * where the answer phrase was that its report does not hold (the passages it noted, the pages it
 * read). Read once all of a set's questions are done, since opening the store with this checkout's
 * code migrates it, and a build measured from another checkout (`QUALITY_BUILD`) may not open it after.
 */
async function fromJournals(
  home: string,
  sessions: Map<string, { holds: (text: string) => boolean; answers: (path: string) => boolean }>,
): Promise<Map<string, { pages: string[]; lost: Lost }>> {
  const store = await openStore({ db: join(home, 'quarry.db') });
  try {
    const found = new Map<string, { pages: string[]; lost: Lost }>();
    for (const [sessionId, { holds, answers }] of sessions) {
      const steps = await store.listSteps(sessionId);
      const search = steps.filter((step) => /search-\d+$/.test(step.key)).sort((a, b) => a.seq - b.seq)[0];
      const results = (search?.output as { results?: { url: string }[] } | undefined)?.results ?? [];
      const noted = steps
        .filter((step) => /\/notes-\d+$/.test(step.key))
        .flatMap((step) => (step.output as { value?: { text?: string }[] } | undefined)?.value ?? []);
      const read = steps
        .filter((step) => /\/read-\d+$/.test(step.key))
        .map((step) => step.output as { url?: string; text?: string } | undefined);
      const readAnswering = read.some((source) =>
        answers(decodeURIComponent((source?.url ?? '').replace(/^file:\/\//, ''))),
      );
      const lost: Lost = noted.some((note) => holds(note.text ?? ''))
        ? 'noted'
        : read.some((source) => holds(source?.text ?? ''))
          ? 'read'
          : readAnswering
            ? 'part'
            : 'unread';
      found.set(sessionId, {
        pages: results.map((result) => decodeURIComponent(result.url.replace(/^file:\/\//, ''))),
        lost,
      });
    }
    return found;
  } finally {
    await store.close();
  }
}

export function halfOf(set: QuestionSet, index: number): Half {
  return set.split ?? (index % 2 === 0 ? 'dev' : 'test');
}

async function measureSet(name: string, set: QuestionSet): Promise<{ outcomes: Outcome[]; indexMs: number }> {
  const home = mkdtempSync(join(tmpdir(), 'quarry-bench-quality-'));
  const navigation = new Map<string, boolean>();
  const outcomes: Outcome[] = [];
  const box = new PageSearch(set.corpus);
  try {
    // Index once up front, so per-question times measure research, not the first indexing.
    const indexed = performance.now();
    execFileSync(process.execPath, [bin, 'index', set.corpus], {
      env: { PATH: process.env.PATH, HOME: home, QUARRY_HOME: home },
      stdio: 'ignore',
    });
    const indexMs = performance.now() - indexed;
    const passages = new PassageSearch(join(home, 'quarry.db'));
    const wanted = process.env.QUALITY_HALF;
    const sessionOf = new Map<number, string>();
    const judgesOf = new Map<string, { holds: (text: string) => boolean; answers: (path: string) => boolean }>();
    const limit = envInteger('QUALITY_LIMIT', set.questions.length);
    for (const [index, labeled] of set.questions.slice(0, limit).entries()) {
      const half = halfOf(set, index);
      if (wanted && wanted !== half) continue;
      const answering = new Set(labeled.pages);
      const boxStarted = performance.now();
      const boxed = box.search(labeled.question);
      const baselineMs = performance.now() - boxStarted;
      const holds = (text: string) => labeled.phrases.some((phrase) => readable(text).includes(readable(phrase)));
      const passageHits = passages.search(labeled.question).map(holds);
      const { report, sessionId, ms, error } = await research(home, set.corpus, labeled.question);
      const listed = listedSources(report);
      const sources = reportSources(report).map((path) => pageOf(set, path));
      if (sessionId) {
        sessionOf.set(outcomes.length, sessionId);
        judgesOf.set(sessionId, { holds, answers: (path) => answering.has(pageOf(set, path)) });
      }
      outcomes.push({
        half,
        question: labeled.question,
        phrase: holds(reportBody(report)),
        phraseFirst: holds(firstSection(report)),
        length: { first: firstSection(report).length, body: reportBody(report).length },
        // Read from the journals once every question of the set is done (`fromJournals`).
        lost: null,
        passageTop: [passageHits[0] === true, passageHits.slice(0, 3).some(Boolean), passageHits.some(Boolean)],
        unquoted: report
          ? unquotedText(report, (number) => {
              const where = listed.get(number);
              return where === undefined ? undefined : passages.texts.get(decodeURIComponent(where));
            })
          : [],
        cited: sources.some((source) => answering.has(source)),
        first: sources[0] !== undefined && answering.has(sources[0]),
        searchFirst: false,
        searchTop5: false,
        answering: [...answering],
        baselineTop1: boxed[0] !== undefined && answering.has(boxed[0]),
        baselineTop3: boxed.some((page) => answering.has(page)),
        navigation: sources.filter((source) => isNavigationPage(set.corpus, source, navigation)),
        codeHeadings: codeHeadings(report),
        repeatedSentences: repeatedSentences(report),
        cutLeadIns: cutLeadIns(report),
        sources,
        ms,
        baselineMs,
        error,
      });
    }
    const journals = await fromJournals(home, judgesOf);
    for (const [index, sessionId] of sessionOf) {
      const outcome = outcomes[index]!;
      const journal = journals.get(sessionId);
      const searched = journal?.pages ?? [];
      if (!outcome.phrase && journal) outcome.lost = journal.lost;
      const answers = (path: string) => outcome.answering.includes(pageOf(set, path));
      outcome.searchFirst = searched[0] !== undefined && answers(searched[0]);
      outcome.searchTop5 = searched.slice(0, 5).some(answers);
    }
    console.error(`quality: ${name} done (${outcomes.length} questions)`);
    passages.close();
    return { outcomes, indexMs };
  } finally {
    box.close();
    // QUALITY_KEEP=<folder>: each set's home (its store, with every session's journal) is kept there.
    const keep = process.env.QUALITY_KEEP;
    if (keep) {
      mkdirSync(keep, { recursive: true });
      rmSync(join(keep, name), { recursive: true, force: true });
      cpSync(home, join(keep, name), { recursive: true });
    }
    rmSync(home, { recursive: true, force: true });
  }
}

const count = (outcomes: Outcome[], pick: (outcome: Outcome) => boolean) => outcomes.filter(pick).length;

export async function run(): Promise<void> {
  const names = process.env.QUALITY_SET ? process.env.QUALITY_SET.split(',') : SETS;
  // QUALITY_BUILD: another checkout's build (its bin/ and dist/) to measure instead, such as the
  // analyst before a change (`git worktree add /tmp/before <commit>` and build it there).
  const build = snapshotBuild(process.env.QUALITY_BUILD ?? root);
  bin = join(build, 'bin', 'quarry');
  try {
    await measureSets(names);
  } finally {
    rmSync(build, { recursive: true, force: true });
  }
}

async function measureSets(names: string[]): Promise<void> {
  const rows: string[] = [];
  const details: string[] = [];
  for (const name of names) {
    const set = JSON.parse(readFileSync(join(root, 'bench', 'quality', `${name}.json`), 'utf8')) as QuestionSet;
    if (!existsSync(set.corpus)) {
      rows.push(`| ${name} | skipped: ${set.corpus} is missing (${set.package}) |`);
      continue;
    }
    const { outcomes, indexMs } = await measureSet(name, set);
    for (const half of ['dev', 'test'] as const) {
      const part = outcomes.filter((outcome) => outcome.half === half);
      if (part.length === 0) continue;
      const n = (pick: (outcome: Outcome) => boolean) => count(part, pick);
      const sum = (pick: (outcome: Outcome) => number) => part.reduce((total, outcome) => total + pick(outcome), 0);
      rows.push(
        `| ${name} | ${half} (${part.length}) | ${n((o) => o.baselineTop1)} / ${n((o) => o.baselineTop3)} | ${n((o) => o.passageTop[0])} / ${n((o) => o.passageTop[1])} / ${n((o) => o.passageTop[2])} | ${n((o) => o.searchFirst)} / ${n((o) => o.searchTop5)} | ${n((o) => o.first)} | ${n((o) => o.cited)} | ${n((o) => o.phrase)} | ${n((o) => o.phraseFirst)} | ${n((o) => o.lost === 'noted')} / ${n((o) => o.lost === 'read')} / ${n((o) => o.lost === 'part')} / ${n((o) => o.lost === 'unread')} | ${sum((o) => o.unquoted.length)} | ${sum((o) => o.codeHeadings.length)} | ${sum((o) => o.repeatedSentences)} | ${sum((o) => o.cutLeadIns)} | ${sum((o) => o.navigation.length)} | ${n((o) => o.error !== undefined)} | ${median(part.map((o) => o.length.first)).toFixed(0)} / ${median(part.map((o) => o.length.body)).toFixed(0)} | ${(median(part.map((o) => o.ms)) / 1000).toFixed(2)} s / ${median(part.map((o) => o.baselineMs)).toFixed(1)} ms | ${(indexMs / 1000).toFixed(1)} s |`,
      );
    }
    details.push(
      `\n${name} (${set.package}): half · page box top-1 · passage box top-3 · first search · cited first · cited · phrase · phrase in the first section`,
    );
    const mark = (ok: boolean) => (ok ? '✓' : '✗');
    for (const o of outcomes)
      details.push(
        `- ${o.half} ${mark(o.baselineTop1)} ${mark(o.passageTop[1])} ${mark(o.searchFirst)} ${mark(o.first)} ${mark(o.cited)} ${mark(o.phrase)} ${mark(o.phraseFirst)}${o.lost ? ` (${o.lost})` : ''} ${o.question}${o.error ? ` — error: ${o.error}` : ''} → ${o.sources.slice(0, 3).join(', ')}${o.navigation.length ? ` (navigation: ${o.navigation.join(', ')})` : ''}${o.codeHeadings.length ? ` (code headings: ${o.codeHeadings.join(' | ')})` : ''}${o.repeatedSentences ? ` (${o.repeatedSentences} repeated)` : ''}${o.cutLeadIns ? ` (${o.cutLeadIns} ending on a colon)` : ''}${o.unquoted.length ? ` (not verbatim: ${o.unquoted.map((text) => JSON.stringify(text.slice(0, 80))).join(' | ')})` : ''}`,
      );
  }
  console.log('\n## Research quality: the offline analyst beside a plain FTS5 page box and passage box\n');
  console.log(
    'Counts of questions. Page box: top-1 / top-3 hold an answering page. Passage box: top-1 / 3 / 5 passages hold an answer phrase. Quarry: its first search ranks an answering page first / among its first five; the report cites one first; cites one; holds an answer phrase in its body; in its first section; where a report without it had it (in a passage it noted but did not quote / in what it read of a page, in none of its notes / in a part of an answering page it did not read, having read others / in no answering page it read); then sentences not word for word in their cited document, code headings, repeated sentences, quotes that end on a colon (a lead-in without what it announces), navigation pages cited (all should be 0), failed runs, the median characters of the first section and of the body (what a reader reads: a change that quotes more must show it), and time per question (a fresh `quarry run`) beside the page box.\n',
  );
  console.log(
    '| set | half | page box top-1 / top-3 | passage box top-1 / 3 / 5 | first search top-1 / top-5 | cited first | cited | answer phrase | in first section | without it: noted / read / part unread / page unread | not verbatim | code headings | repeated | ending on a colon | navigation | failed | characters: first section / body (median) | per question: Quarry / box | indexing |',
  );
  console.log(
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const row of rows) console.log(row);
  if (process.env.QUALITY_DETAILS !== '0') for (const line of details) console.log(line);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await run();
