import { join } from 'node:path';
import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import { collect, parseWholeNumber } from '../parse-options.ts';

export function registerServe(program: Command, runtime: CliRuntime): void {
  program
    .command('serve')
    .description('serve the HTTP API and the web UI, running sessions in this process')
    .option('--host <host>', 'address to bind (default 127.0.0.1; beyond loopback every request needs a token)')
    .option('--port <port>', 'port (default 7777)')
    .option('--docs <folder>', 'a documents folder the server may read (repeatable; the only ones it reads)', collect)
    .option('--search <provider>', 'default web search provider (repeatable)', collect)
    .option('--no-runner', 'serve the API only; workers elsewhere run the sessions')
    .option('--concurrency <n>', 'sessions run at once by the in-process runner (1-64)', '4')
    .option('--watch', 'keep the document folders indexed as their files change')
    .action(
      async (options: {
        host?: string;
        port?: string;
        docs?: string[];
        search?: string[];
        runner: boolean;
        concurrency: string;
        watch?: boolean;
      }) => {
        const { packageRoot } = await import('../../config/package-root.ts');
        const { checkWebProvider } = await import('../../providers/search/create-search-providers.ts');
        const { announceServer } = await import('../running-servers.ts');
        const port = parseWholeNumber(options.port, '--port', 0, 65535);
        const concurrency = parseWholeNumber(options.concurrency, '--concurrency', 1, 64);
        const { processLog } = await import('../../config/log.ts');
        const log = processLog();
        const config = await runtime.config({ host: options.host, port, docs: options.docs, search: options.search });
        for (const name of config.search) checkWebProvider(name, config.providers);
        const context = await runtime.openRunner();
        // The HTTP stack (Hono, MCP, the OpenAPI document) loads only for the command that serves.
        const { startServer } = await import('../../server/serve.ts');
        const server = await startServer({
          store: context.admin,
          config,
          runner: options.runner,
          concurrency,
          webRoot: join(packageRoot(), 'web', 'dist'),
          log,
          watch: options.watch === true,
        });
        log(
          `quarry serve: listening on ${server.url} (store ${context.store.info().location}; ${server.exposure === 'loopback' ? 'loopback only: no sign-in until the first user is added' : 'tokens required'}${server.runner ? `; runner ${server.runner.workerId}` : '; no runner'})`,
          undefined,
          { workerId: server.runner?.workerId },
        );
        // `quarry share` on this machine prints links to this server, at the address it really has.
        const withdraw = announceServer(config.home, { url: server.url, store: context.store.info().location });
        await new Promise<void>((resolve) => {
          let signals = 0;
          const stop = () => {
            if (++signals > 1) process.exit(130);
            withdraw();
            log('quarry serve: shutting down; running sessions go back to the queue…');
            void server.close().then(resolve);
          };
          process.on('SIGINT', stop);
          process.on('SIGTERM', stop);
        });
      },
    );
}
