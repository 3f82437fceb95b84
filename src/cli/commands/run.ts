import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import { exitCodes } from '../error-to-exit-code.ts';
import { printJson, printLine, shortId } from '../output.ts';
import { collect, parseWholeNumber } from '../parse-options.ts';

interface RunOptions {
  docs?: string[];
  search?: string[];
  model?: string;
  fastModel?: string;
  iterations?: string;
  breadth?: string;
  reviewOutline?: boolean;
  clarify?: boolean;
  detach?: boolean;
  externalId?: string;
}

export function registerRun(program: Command, runtime: CliRuntime, setExitCode: (code: number) => void): void {
  program
    .command('run')
    .description('research a question: plan, search, read, iterate, and write a cited report')
    .argument('<question>', 'what to research')
    .option('--docs <folder>', 'a folder of documents to research (repeatable; default QUARRY_DOCS)', collect)
    .option(
      '--search <provider>',
      'a web search provider: searxng, tavily, brave, exa, jina (repeatable; default QUARRY_SEARCH)',
      collect,
    )
    .option('--model <provider:model>', 'the language model (default QUARRY_MODEL; none: the extractive analyst)')
    .option('--fast-model <provider:model>', 'a faster model for light steps (default QUARRY_FAST_MODEL)')
    .option('--iterations <n>', 'most research iterations (1-10, default 3)')
    .option('--breadth <n>', 'search queries per iteration (1-8, default 3)')
    .option('--review-outline', 'wait for you to approve the outline before writing')
    .option(
      '--clarify',
      'with a model: ask clarifying questions first when the question is ambiguous, and wait for the answers',
    )
    .option('--detach', 'queue it for a worker and return its id at once')
    .option('--external-id <id>', 'your own id for it; running again with the same id returns that session')
    .action(async (question: string, options: RunOptions) => {
      const context = await runtime.openRunner({ model: options.model, fastModel: options.fastModel });
      const settings: Record<string, unknown> = {};
      const iterations = parseWholeNumber(options.iterations, '--iterations', 1, 10);
      const breadth = parseWholeNumber(options.breadth, '--breadth', 1, 8);
      if (iterations !== undefined) settings.maxIterations = iterations;
      if (breadth !== undefined) settings.queriesPerIteration = breadth;
      if (options.reviewOutline) settings.reviewOutline = true;
      if (options.clarify) settings.clarify = true;
      if (options.clarify && !context.config.model)
        console.error(
          'quarry: --clarify asks with a model; without one (--model, QUARRY_MODEL) the question is researched as asked.',
        );
      // The command is a span when tracing is on: the run stores its trace, so a resume in another
      // process (after a kill, on a worker) continues this trace rather than starting one (issue 45).
      const { inSpan } = await import('../../shared/tracing.ts');
      await inSpan('quarry run', { 'quarry.cli.command': 'run' }, () =>
        runCommand(runtime, context, question, options, settings, setExitCode),
      );
    });
}

async function runCommand(
  runtime: CliRuntime,
  context: Awaited<ReturnType<CliRuntime['openRunner']>>,
  question: string,
  options: RunOptions,
  settings: Record<string, unknown>,
  setExitCode: (code: number) => void,
): Promise<void> {
  const { indexProgress } = await import('../progress-bar.ts');
  const { planResume, queueResume } = await import('../../service/session-control.ts');
  const { runInForeground } = await import('../foreground.ts');
  const { startResearch } = await import('../../service/start-research.ts');
  const progress = indexProgress(runtime);
  const { session, index, created } = await startResearch(
    context,
    {
      question,
      settings,
      docs: options.docs,
      search: options.search,
      externalId: options.externalId,
      // Run here: created parked, so a worker sharing the store cannot take it before this
      // process claims it. Detached: queued for the workers.
      start: options.detach === true,
    },
    { onProgress: progress.update },
  );
  progress.done();
  if (index && !runtime.json) {
    console.error(
      `Indexed ${index.folders.join(', ')}: ${index.added} added, ${index.updated} updated, ${index.unchanged} unchanged, ${index.removed} removed${index.skipped.length ? `, ${index.skipped.length} skipped` : ''}.`,
    );
  }
  if (!created && !runtime.json)
    console.error(`Session ${shortId(session.id)} already has external id ${options.externalId}.`);
  // Running it again carries on where it stopped: an interrupted or failed session is resumed
  // (here, or queued with --detach), as `quarry resume` would.
  if (!created && (session.status === 'interrupted' || session.status === 'failed')) {
    if (!runtime.json) console.error(`It was ${session.status}: resuming it.`);
    if (options.detach) {
      const queued = await queueResume(context, { sessionId: session.id });
      if (runtime.json) printJson({ type: 'session', sessionId: queued.id, status: queued.status, created });
      else printLine(`Queued session ${queued.id} to resume; watch it with: quarry show ${shortId(queued.id)}`);
      return;
    }
    setExitCode(await runInForeground(runtime, session.id, await planResume(context, { sessionId: session.id })));
    return;
  }
  if (!created && session.status === 'waiting') setExitCode(exitCodes.waiting);
  if (options.detach || !created) {
    if (runtime.json) printJson({ type: 'session', sessionId: session.id, status: session.status, created });
    else if (created)
      printLine(
        `Queued session ${session.id}. A worker (quarry worker, or quarry serve) will run it; watch it with: quarry show ${shortId(session.id)}`,
      );
    else printLine(`Session ${session.id} (${session.status}). See it with: quarry show ${shortId(session.id)}`);
    return;
  }
  setExitCode(await runInForeground(runtime, session.id));
}
