/**
 * Research quality of the offline (extractive) analyst, measured on labeled questions over real
 * documentation nobody here wrote (Debian's python3-doc): for each question, the pages that answer
 * it and a phrase of each that carries the answer. Two sets: the development set the analyst was
 * tuned on, and a held-out set written before that tuning (the gap between them is overfitting).
 * Every question is researched through the real executable (`quarry run --json`), so the figure is
 * what a user gets. Printed side by side with a previous version of Quarry (a git ref, checked out
 * into a temporary worktree).
 *
 *   npm run bench -- quality                      this tree, and the baseline ref (default: f54f6f8)
 *   QUALITY_BASELINE=none npm run bench -- quality   this tree only
 *   QUALITY_LIMIT=10, QUALITY_SET=bench/quality/python-docs.json (one set instead of both)
 *
 * Navigation pages (indexes, tables of contents, link lists) are judged independently of Quarry's
 * own classifier: more than half of the page's text is link text, or it is an index page by name.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseHTML } from 'linkedom';
import { median } from './bench-lib.ts';

interface LabeledQuestion {
  question: string;
  /** Pages (relative to the corpus) that answer it. */
  pages: string[];
  /** Phrases of those pages that carry the answer: a report answers when it holds any of them. */
  phrases: string[];
}

interface QuestionSet {
  corpus: string;
  package: string;
  questions: LabeledQuestion[];
}

interface Outcome {
  question: string;
  phrase: boolean;
  cited: boolean;
  first: boolean;
  navigation: string[];
  sources: string[];
  ms: number;
  error?: string;
}

const root = fileURLToPath(new URL('../', import.meta.url));
const defaultBaseline = 'f54f6f8';

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
 * (`_sources/library/re.rst.txt`, which the first wave's analyst indexed and cited) counts as the
 * page it was built into (`library/re.html`): it is the same text.
 */
export function reportSources(report: string): string[] {
  const list = report.split(/^## Sources\s*$/m)[1] ?? '';
  return [...list.matchAll(/^\d+\.\s.*?<([^>]+)>\s*$/gm)].map((match) =>
    match[1]!.replace(/^file:\/\//, '').replace(/\/_sources\/(.+)\.rst\.txt$/, '/$1.html'),
  );
}

const navigationNames = /(^|\/)(genindex[^/]*|py-modindex|modindex|contents|search|index|bookindex)\.html$/;

/** True for index pages, tables of contents and link lists: judged from the HTML itself. */
function isNavigationPage(path: string, cache: Map<string, boolean>): boolean {
  const known = cache.get(path);
  if (known !== undefined) return known;
  let navigation = navigationNames.test(path);
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

/** A tree's executable: bin/quarry, or bin/quarry.mjs in trees from before it was CommonJS (the baseline). */
function quarryBin(tree: string): string {
  const bin = join(tree, 'bin', 'quarry');
  return existsSync(bin) ? bin : join(tree, 'bin', 'quarry.mjs');
}

/** Runs one research through a tree's executable; resolves with the report (or the error). */
function research(
  tree: string,
  home: string,
  corpus: string,
  question: string,
): Promise<{ report: string; ms: number; error?: string }> {
  return new Promise((resolvePromise) => {
    const started = performance.now();
    const child = spawn(process.execPath, [quarryBin(tree), '--json', 'run', question, '--docs', corpus], {
      env: { PATH: process.env.PATH, HOME: home, QUARRY_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', () => {
      const ms = performance.now() - started;
      const result = stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          try {
            return JSON.parse(line) as { type?: string; report?: string | null };
          } catch {
            return {};
          }
        })
        .find((line) => line.type === 'result');
      if (result?.report) resolvePromise({ report: result.report, ms });
      else resolvePromise({ report: '', ms, error: stderr.trim().split('\n').at(-1) ?? 'no report' });
    });
  });
}

async function measureTree(label: string, tree: string, set: QuestionSet, questions: LabeledQuestion[]) {
  const home = mkdtempSync(join(tmpdir(), 'quarry-bench-quality-'));
  const cache = new Map<string, boolean>();
  const outcomes: Outcome[] = [];
  try {
    // Index once up front, so per-question times measure research, not the first indexing.
    const indexed = performance.now();
    execFileSync(process.execPath, [quarryBin(tree), 'index', set.corpus], {
      env: { PATH: process.env.PATH, HOME: home, QUARRY_HOME: home },
      stdio: 'ignore',
    });
    const indexMs = performance.now() - indexed;
    for (const labeled of questions) {
      const { report, ms, error } = await research(tree, home, set.corpus, labeled.question);
      const sources = reportSources(report).map((path) => relative(set.corpus, path));
      const answering = new Set(labeled.pages);
      outcomes.push({
        question: labeled.question,
        phrase: labeled.phrases.some((phrase) => readable(report).includes(readable(phrase))),
        cited: sources.some((source) => answering.has(source)),
        first: sources[0] !== undefined && answering.has(sources[0]),
        navigation: sources.filter((source) => isNavigationPage(join(set.corpus, source), cache)),
        sources,
        ms,
        error,
      });
    }
    return { label, outcomes, indexMs };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function share(outcomes: Outcome[], pick: (outcome: Outcome) => boolean): string {
  return `${Math.round((outcomes.filter(pick).length / Math.max(1, outcomes.length)) * 100)}%`;
}

/** A temporary worktree of `ref` that shares this tree's node_modules. */
function worktree(ref: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), 'quarry-bench-baseline-'));
  rmSync(path, { recursive: true, force: true });
  execFileSync('git', ['-C', root, 'worktree', 'add', '--detach', path, ref], { stdio: 'ignore' });
  symlinkSync(join(root, 'node_modules'), join(path, 'node_modules'));
  return {
    path,
    remove: () => execFileSync('git', ['-C', root, 'worktree', 'remove', '--force', path], { stdio: 'ignore' }),
  };
}

const SETS = ['bench/quality/python-docs.json', 'bench/quality/python-docs-heldout.json'];

export async function run(): Promise<void> {
  const paths = process.env.QUALITY_SET ? [process.env.QUALITY_SET] : SETS;
  const baselineRef = process.env.QUALITY_BASELINE ?? defaultBaseline;
  const rows: { set: string; label: string; outcomes: Outcome[]; indexMs: number }[] = [];
  let corpus = '';
  for (const path of paths) {
    const setPath = resolve(root, path);
    const set = JSON.parse(readFileSync(setPath, 'utf8')) as QuestionSet;
    corpus = set.corpus;
    if (!existsSync(set.corpus)) {
      console.log(`\n## Research quality\n\nSkipped: ${set.corpus} is missing (apt-get install python3-doc).`);
      return;
    }
    const questions = set.questions.slice(0, Number(process.env.QUALITY_LIMIT ?? set.questions.length));
    const name = `${relative(root, setPath)} (${questions.length} questions)`;
    rows.push({ set: name, ...(await measureTree('this tree', root, set, questions)) });
    if (baselineRef !== 'none') {
      const baseline = worktree(baselineRef);
      try {
        rows.push({ set: name, ...(await measureTree(`baseline ${baselineRef}`, baseline.path, set, questions)) });
      } finally {
        baseline.remove();
      }
    }
  }
  console.log(`\n## Research quality: the extractive analyst on ${corpus}\n`);
  console.log(
    '| question set | analyst | answer phrase in report | answering page cited | cited first | navigation pages cited | failed runs | median run | indexing |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const { set, label, outcomes, indexMs } of rows) {
    console.log(
      `| ${set} | ${label} | ${share(outcomes, (outcome) => outcome.phrase)} | ${share(outcomes, (outcome) => outcome.cited)} | ${share(outcomes, (outcome) => outcome.first)} | ${outcomes.reduce((sum, outcome) => sum + outcome.navigation.length, 0)} | ${outcomes.filter((outcome) => outcome.error).length} | ${(median(outcomes.map((outcome) => outcome.ms)) / 1000).toFixed(2)} s | ${(indexMs / 1000).toFixed(1)} s |`,
    );
  }
  for (const { set, outcomes } of rows.filter((row) => row.label === 'this tree')) {
    console.log(`\nPer question, ${set}, this tree: phrase · cited · first · sources in citation order`);
    for (const outcome of outcomes) {
      const mark = (ok: boolean) => (ok ? '✓' : '✗');
      console.log(
        `- ${mark(outcome.phrase)} ${mark(outcome.cited)} ${mark(outcome.first)} ${outcome.question}${outcome.error ? ` — error: ${outcome.error}` : ''} → ${outcome.sources.slice(0, 4).join(', ')}${outcome.navigation.length ? ` (navigation: ${outcome.navigation.join(', ')})` : ''}`,
      );
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) await run();
