import { copyFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import { invalidInput } from '../../shared/errors.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { printJson, printLine } from '../output.ts';

function size(bytes: number): string {
  return bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** `quarry docs add|ls|rm`: the acting user's library (the local user's, or `--as <user>`'s). */
export function registerLibrary(program: Command, runtime: CliRuntime): void {
  const docs = program
    .command('docs')
    .description('your library: documents kept and indexed by Quarry, searched by default (library/<id> for one)');
  docs
    .command('add')
    .description(
      'copy files into your library and index them (all or none: a file Quarry cannot read refuses the rest)',
    )
    .argument('<files...>', 'the files to add')
    .action(async (files: string[]) => {
      const { addToLibrary, discardIncoming, incomingFolder } = await import('../../service/library.ts');
      const context = await runtime.open();
      const owner = context.store.ownerId;
      for (const file of files)
        if (!(await stat(file).catch(() => null))?.isFile()) throw invalidInput('file', `${file} is not a file`);
      const folder = await incomingFolder(context.config, owner);
      try {
        const incoming = [];
        for (const [index, file] of files.entries()) {
          const path = join(folder, String(index));
          await copyFile(file, path);
          incoming.push({ name: basename(file), path, size: (await stat(path)).size });
        }
        const added = await addToLibrary({ corpus: context.admin, config: context.config }, owner, incoming);
        if (runtime.json) printJson({ documents: added });
        else
          for (const document of added)
            printLine(`Added ${document.name} as library/${document.id}: ${document.title}`);
      } finally {
        await discardIncoming(context.config, owner, folder);
      }
    });
  docs
    .command('ls')
    .description('list your library, newest first')
    .action(async () => {
      const { listLibrary } = await import('../../service/library.ts');
      const context = await runtime.open();
      const documents = await listLibrary({ corpus: context.admin, config: context.config }, context.store.ownerId);
      if (runtime.json) return printJson({ documents });
      if (documents.length === 0) return printLine('Your library is empty: quarry docs add <files…> adds to it.');
      for (const document of documents)
        printLine(`library/${document.id}  ${document.name}  ${size(document.size)}  ${document.title}`);
    });
  docs
    .command('rm')
    .description('remove documents from your library, and their passages from the index')
    .argument('<ids...>', 'document ids (as quarry docs ls shows them, with or without library/)')
    .action(async (ids: string[]) => {
      const { removeFromLibrary } = await import('../../service/library.ts');
      const context = await runtime.open();
      for (const id of ids) {
        const plain = id.replace(/^library\//, '');
        await removeFromLibrary({ corpus: context.admin, config: context.config }, context.store.ownerId, plain);
        if (runtime.json) printJson({ type: 'removed', id: plain });
        else printLine(`Removed library/${plain}.`);
      }
    });
}
