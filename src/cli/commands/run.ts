import type { Command } from 'commander';
import { startResearch } from '../../service/start-research.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { runInForeground } from '../foreground.ts';
import { shortId, printJson } from '../output.ts';
import { collect, parseWholeNumber } from '../parse-options.ts';

interface RunOptions {
  docs?: string[];
  search?: string[];
  model?: string;
  iterations?: string;
  breadth?: string;
  reviewOutline?: boolean;
  detach?: boolean;
}

export function registerRun(program: Command, runtime: CliRuntime, setExitCode: (code: number) => void): void {
  program
    .command('run')
    .description('research a question: plan, search, read, iterate, and write a cited report')
    .argument('<question>', 'what to research')
    .option('--docs <folder>', 'a folder of documents to research (repeatable; default QUARRY_DOCS)', collect)
    .option('--search <provider>', 'a web search provider: searxng, tavily, brave, exa, jina (repeatable; default QUARRY_SEARCH)', collect)
    .option('--model <provider:model>', 'the language model (default QUARRY_MODEL; none: the extractive analyst)')
    .option('--iterations <n>', 'most research iterations (1-10, default 3)')
    .option('--breadth <n>', 'search queries per iteration (1-8, default 3)')
    .option('--review-outline', 'wait for you to approve the outline before writing')
    .option('--detach', 'queue it for a worker and return its id at once')
    .action(async (question: string, options: RunOptions) => {
      const context = await runtime.open();
      const settings: Record<string, unknown> = {};
      const iterations = parseWholeNumber(options.iterations, '--iterations', 1, 10);
      const breadth = parseWholeNumber(options.breadth, '--breadth', 1, 8);
      if (iterations !== undefined) settings.maxIterations = iterations;
      if (breadth !== undefined) settings.queriesPerIteration = breadth;
      if (options.reviewOutline) settings.reviewOutline = true;
      const model = options.model ?? runtime.defaults.model;
      if (model) settings.model = model;
      const docs = options.docs ?? (options.search ? [] : runtime.defaults.docs);
      const search = options.search ?? (options.docs ? [] : runtime.defaults.search);
      const progressOut = runtime.json ? () => undefined : (text: string) => process.stderr.write(text);
      const { session, index } = await startResearch({ ...context }, { question, settings, docs, search }, {
        onProgress: ({ done, total }) => {
          if (process.stderr.isTTY && total > 20) progressOut(`\rIndexing documents: ${done}/${total}`);
        },
      });
      if (index && !runtime.json) {
        if (process.stderr.isTTY) progressOut('\r\x1b[2K');
        console.error(`Indexed ${index.folders.join(', ')}: ${index.added} added, ${index.updated} updated, ${index.unchanged} unchanged, ${index.removed} removed${index.skipped.length ? `, ${index.skipped.length} skipped` : ''}.`);
      }
      if (options.detach) {
        if (runtime.json) printJson({ type: 'session', sessionId: session.id, status: session.status });
        else console.log(`Queued session ${session.id}. A worker (quarry worker, or quarry serve) will run it; watch it with: quarry show ${shortId(session.id)}`);
        return;
      }
      setExitCode(await runInForeground(runtime, session.id));
    });
}
