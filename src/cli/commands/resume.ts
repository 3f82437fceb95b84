import type { Command } from 'commander';
import { planResume } from '../../service/session-control.ts';
import { resolveSessionId } from '../../service/session-queries.ts';
import { parseResearchSettings } from '../../research/research-settings.ts';
import { resolveFolders } from '../../service/start-research.ts';
import { indexFolders } from '../../providers/search/local-corpus/index-folders.ts';
import { createWebProvider } from '../../providers/search/create-search-providers.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { runInForeground } from '../foreground.ts';
import { collect } from '../parse-options.ts';

export function registerResume(program: Command, runtime: CliRuntime, setExitCode: (code: number) => void): void {
  program
    .command('resume')
    .description('continue a session at its resume point, under the same id (or rewind it in place with --from)')
    .argument('<id>', 'session id or unique prefix')
    .option('--from <phase|step-key>', 'rewind in place: redo from this phase or step')
    .option('--force', 'run a completed session again')
    .option('--docs <folder>', 'add a documents folder to the session (repeatable)', collect)
    .option('--search <provider>', 'add a web search provider to the session (repeatable)', collect)
    .option('--replace-sources', 'use the given --docs/--search instead of the session\'s own')
    .action(async (id: string, options: { from?: string; force?: boolean; docs?: string[]; search?: string[]; replaceSources?: boolean }) => {
      const context = await runtime.open();
      const sessionId = await resolveSessionId(context, id);
      const plan = await planResume(context, { sessionId, from: options.from, force: options.force });
      if (options.docs || options.search) {
        const current = parseResearchSettings(plan.session.settings);
        const docs = resolveFolders(options.docs ?? []);
        for (const name of options.search ?? []) createWebProvider(name, runtime.env);
        const settings = {
          ...plan.session.settings,
          docs: options.replaceSources ? docs : [...new Set([...current.docs, ...docs])],
          search: options.replaceSources ? (options.search ?? []) : [...new Set([...current.search, ...(options.search ?? [])])],
        };
        if (docs.length) await indexFolders(context.store, docs);
        await context.store.updateSession(sessionId, { settings }, { ownerId: context.ownerId });
      }
      setExitCode(await runInForeground(runtime, sessionId, plan));
    });
}
