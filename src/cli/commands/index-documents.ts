import type { Command } from 'commander';
import type { IndexReport } from '../../providers/search/local-corpus/index-folders.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { printJson, printLine } from '../output.ts';

function printReport(runtime: CliRuntime, report: IndexReport, folder?: string): void {
  if (runtime.json) {
    printJson(report);
    return;
  }
  printLine(
    `${folder ? `${folder}: ` : ''}${report.added} added, ${report.updated} updated, ${report.unchanged} unchanged, ${report.removed} removed; ${report.passages} passages.`,
  );
  for (const skipped of report.skipped) printLine(`  skipped ${skipped.path}: ${skipped.reason}`);
}

export function registerIndex(program: Command, runtime: CliRuntime): void {
  program
    .command('index')
    .description(
      'index folders for research (incremental): Markdown, text, reST, AsciiDoc, man pages, HTML, PDF, Word, EPUB, OpenDocument, PowerPoint, CSV and spreadsheets',
    )
    .argument('<folders...>', 'folders to index')
    .option('--watch', 'then keep them indexed: index a folder again whenever its files change, until Ctrl-C')
    .action(async (folders: string[], options: { watch?: boolean }) => {
      const { existingFolder } = await import('../../service/document-folders.ts');
      const { indexProgress } = await import('../progress-bar.ts');
      const context = await runtime.open();
      const progress = indexProgress(runtime);
      const report = await context.indexer.ensure(
        folders.map((folder) => folder),
        { onProgress: progress.update },
      );
      progress.done();
      if (report) printReport(runtime, report);
      if (!options.watch) return;
      const { watchFolders } = await import('../../service/watch-folders.ts');
      const watched = folders.map((folder) => existingFolder(folder, 'folders'));
      // One index at a time: changes to several folders are indexed one after another.
      let queue = Promise.resolve();
      const watch = await watchFolders(watched, (folder) => {
        queue = queue
          .then(async () => {
            const again = await context.indexer.ensure([folder]);
            if (again) printReport(runtime, again, folder);
          })
          .catch((error: Error) => printLine(`quarry index: indexing ${folder} failed: ${error.message}`));
      });
      await watch.ready;
      if (!runtime.json) printLine(`Watching ${watched.join(', ')} for changes; Ctrl-C stops.`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      await watch.close();
      await queue;
    });
}
