import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import { printJson, printLine } from '../output.ts';

export function registerMigrateStore(program: Command, runtime: CliRuntime): void {
  program
    .command('migrate-store')
    .description('copy every session and user from this store (--db / QUARRY_DB) to another one, such as PostgreSQL')
    .requiredOption('--to <path|postgres-url>', 'the target store (created and migrated if new)')
    .action(async (options: { to: string }) => {
      const { migrateStore } = await import('../../service/migrate-store.ts');
      const { openStore } = await import('../../store/open-store.ts');
      const context = await runtime.open();
      const target = await openStore({ db: options.to });
      try {
        const result = await migrateStore(context.admin, target);
        if (runtime.json) {
          printJson(result);
          return;
        }
        const copied = result.sessions.filter((session) => session.status === 'copied').length;
        printLine(
          `Copied ${copied} session(s) and ${result.users} user(s) to ${target.info().location}. API tokens are not copied: add new ones there with quarry users add.`,
        );
        for (const skipped of result.sessions.filter((session) => session.status === 'skipped'))
          printLine(`  skipped ${skipped.id}: ${skipped.reason}`);
      } finally {
        await target.close();
      }
    });
}
