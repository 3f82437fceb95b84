import type { Command } from 'commander';
import { indexFolders } from '../../providers/search/local-corpus/index-folders.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { printJson } from '../output.ts';

export function registerIndex(program: Command, runtime: CliRuntime): void {
  program
    .command('index')
    .description('index folders of Markdown, text, HTML and PDF files for research (incremental)')
    .argument('<folders...>', 'folders to index')
    .action(async (folders: string[]) => {
      const context = await runtime.open();
      const report = await indexFolders(context.store, folders, {
        onProgress: ({ done, total }) => {
          if (!runtime.json && process.stderr.isTTY && total > 20) process.stderr.write(`\rIndexing: ${done}/${total}`);
        },
      });
      if (!runtime.json && process.stderr.isTTY) process.stderr.write('\r\x1b[2K');
      if (runtime.json) {
        printJson(report);
        return;
      }
      console.log(`${report.added} added, ${report.updated} updated, ${report.unchanged} unchanged, ${report.removed} removed; ${report.passages} passages.`);
      for (const skipped of report.skipped) console.log(`  skipped ${skipped.path}: ${skipped.reason}`);
    });
}
