import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import { printJson, printLine } from '../output.ts';
import { indexProgress } from '../progress-bar.ts';

export function registerIndex(program: Command, runtime: CliRuntime): void {
  program
    .command('index')
    .description(
      'index folders for research (incremental): Markdown, text, reST, AsciiDoc, man pages, HTML, PDF, Word, EPUB, OpenDocument, PowerPoint, CSV and spreadsheets',
    )
    .argument('<folders...>', 'folders to index')
    .action(async (folders: string[]) => {
      const context = await runtime.open();
      const progress = indexProgress(runtime);
      const report = await context.indexer.ensure(
        folders.map((folder) => folder),
        { onProgress: progress.update },
      );
      progress.done();
      if (!report) return;
      if (runtime.json) {
        printJson(report);
        return;
      }
      printLine(
        `${report.added} added, ${report.updated} updated, ${report.unchanged} unchanged, ${report.removed} removed; ${report.passages} passages.`,
      );
      for (const skipped of report.skipped) printLine(`  skipped ${skipped.path}: ${skipped.reason}`);
    });
}
