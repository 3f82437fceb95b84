import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { invalidInput } from '../../shared/errors.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { printJson, printLine, shortId } from '../output.ts';
import { parseWholeNumber } from '../parse-options.ts';

/** export, import and share: sessions as files, and as a read-only link. */
export function registerTransfer(program: Command, runtime: CliRuntime): void {
  program
    .command('export')
    .description('write a session as Markdown, a self-contained HTML page, a PDF, or JSON (everything, to move it)')
    .argument('<id>', 'session id or unique prefix')
    .option(
      '--format <format>',
      'md, html, pdf (printed with Chromium), json, or legacy-json (the per-session layout of earlier research tools)',
      'md',
    )
    .option('-o, --output <file>', 'write to this file instead of standard output')
    .option('--report-version <n>', 'md, html, pdf: this report version, under its own title (default: the latest)')
    .action(async (id: string, options: { format: string; output?: string; reportVersion?: string }) => {
      const { exportSession } = await import('../../service/session-export.ts');
      const { resolveSessionId } = await import('../../service/session-queries.ts');
      const version =
        options.reportVersion === undefined
          ? undefined
          : parseWholeNumber(options.reportVersion, '--report-version', 1, 100_000);
      // Checked before anything is read: a file that cannot be written is a usage error.
      if (options.format === 'pdf' && !options.output && process.stdout.isTTY)
        throw invalidInput('output', 'a PDF is not shown on a terminal; write it to a file with -o report.pdf');
      if (options.output && !existsSync(dirname(resolve(options.output))))
        throw invalidInput('output', `the folder ${dirname(resolve(options.output))} does not exist; create it first`);
      const context = await runtime.open();
      const file = await exportSession(context, {
        sessionId: await resolveSessionId(context, id),
        format: options.format,
        version,
      });
      if (file.damaged.length > 0)
        console.error(
          `quarry: warning: the store could not read back ${file.damaged.length} part(s) of this session's journal (damage on disk); the export holds everything else:\n${file.damaged.map((line) => `  ${line}`).join('\n')}`,
        );
      if (!options.output) {
        process.stdout.write(file.body);
        return;
      }
      try {
        writeFileSync(options.output, file.body);
      } catch (error) {
        throw invalidInput('output', `cannot write ${options.output}: ${(error as Error).message}`);
      }
      if (runtime.json) printJson({ type: 'export', path: options.output, format: options.format });
      else console.error(`Wrote ${options.output}`);
    });

  program
    .command('share')
    .description(
      "make a read-only link to a session's report that opens without signing in (a link it had stops working), or --stop sharing",
    )
    .argument('<id>', 'session id or unique prefix')
    .option('--stop', 'stop sharing: the link stops working at once')
    .action(async (id: string, options: { stop?: boolean }) => {
      const { resolveSessionId } = await import('../../service/session-queries.ts');
      const { shareSession, stopSharing } = await import('../../service/share-links.ts');
      const { runningServers } = await import('../running-servers.ts');
      const context = await runtime.open();
      const sessionId = await resolveSessionId(context, id);
      if (options.stop) {
        await stopSharing(context, sessionId);
        if (runtime.json) printJson({ type: 'share-stopped', sessionId });
        else printLine(`Session ${shortId(sessionId)} is no longer shared; its link stops working.`);
        return;
      }
      const link = await shareSession(context, sessionId);
      // The address others reach: the one configured, else the server of this store running here.
      const { publicUrl } = context.config.server;
      const serving = runningServers(context.config.home, context.store.info().location)[0] ?? null;
      const base = publicUrl ?? serving?.url ?? null;
      const url = base === null ? null : new URL(link.path, base).href;
      const stop = `It is shown only now; \`quarry share ${shortId(sessionId)} --stop\` ends it.`;
      if (runtime.json) printJson({ type: 'share', sessionId, path: link.path, url, serving: serving?.url ?? null });
      else if (url === null)
        printLine(
          `${link.path}\nNo \`quarry serve\` of this store runs on this machine, so the address is not known: the link is this path on the server that serves this store (set QUARRY_PUBLIC_URL to the address others reach it at, and \`quarry share\` prints it whole). ${stop}`,
        );
      else
        printLine(
          `${url}\nAnyone with this link can read the report while ${publicUrl ? 'the server at this address' : `the \`quarry serve\` running here (pid ${serving!.pid})`} serves this store${publicUrl || !/\/\/(127\.|localhost|\[::1\])/.test(url) ? '' : '; it listens on loopback only, so only this machine can open it (set QUARRY_PUBLIC_URL to the address others reach it at)'}. ${stop}`,
        );
    });

  program
    .command('import')
    .description(
      'recreate a session from a quarry-session JSON file, or a legacy per-session JSON file (it can then be resumed here)',
    )
    .argument('<file>', 'the file written by quarry export --format json')
    .action(async (path: string) => {
      const { parseResearchSettings } = await import('../../research/research-settings.ts');
      const { importSessionFile } = await import('../../service/session-export.ts');
      const context = await runtime.open();
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (error) {
        throw invalidInput('file', `cannot read ${path}: ${(error as Error).message}`);
      }
      const imported = await importSessionFile(context, text);
      const { session, droppedFolders, droppedProviders } = imported;
      if (runtime.json) {
        printJson({ ...session, droppedFolders, droppedProviders });
        return;
      }
      const resumable = ['interrupted', 'failed', 'waiting'].includes(session.status);
      const lines = [`Imported session ${session.id} (${session.status}): ${session.title}`];
      if (droppedProviders.length > 0)
        lines.push(
          `It searched ${droppedProviders.join(', ')}, which has no key here; it continues on the documents you give it.`,
        );
      if (droppedFolders.length > 0)
        lines.push(`Left out folders this Quarry may not read: ${droppedFolders.join(', ')}`);
      if (resumable) {
        const { docs, search } = parseResearchSettings(session.settings);
        const needsSources = docs.length === 0 && search.length === 0;
        lines.push(
          needsSources
            ? `Continue it with: quarry resume ${shortId(session.id)} --docs <folder>`
            : `Continue it with: quarry resume ${shortId(session.id)}`,
        );
      }
      printLine(lines.join('\n'));
    });
}
