import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { indexFolders } from '../../providers/search/local-corpus/index-folders.ts';
import { createWebProvider } from '../../providers/search/create-search-providers.ts';
import { startServer } from '../../server/serve.ts';
import { resolveFolders } from '../../service/start-research.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { collect, parseWholeNumber } from '../parse-options.ts';

const webRoot = fileURLToPath(new URL('../../../web/dist', import.meta.url));

export function registerServe(program: Command, runtime: CliRuntime): void {
  program
    .command('serve')
    .description('serve the HTTP API (and the web UI once built), running sessions in this process')
    .option('--host <host>', 'address to bind (beyond loopback needs users: quarry users add)', '127.0.0.1')
    .option('--port <port>', 'port', '7777')
    .option('--docs <folder>', 'default documents folder for sessions created without sources (repeatable)', collect)
    .option('--search <provider>', 'default web search provider (repeatable)', collect)
    .option('--no-runner', 'serve the API only; workers elsewhere run the sessions')
    .option('--concurrency <n>', 'sessions run at once by the in-process runner (1-64)', '4')
    .action(async (options: { host: string; port: string; docs?: string[]; search?: string[]; runner: boolean; concurrency: string }) => {
      const context = await runtime.open();
      const docs = resolveFolders(options.docs ?? runtime.defaults.docs);
      const search = options.search ?? runtime.defaults.search;
      for (const name of search) createWebProvider(name, runtime.env);
      if (docs.length) await indexFolders(context.store, docs);
      const server = await startServer({
        store: context.store,
        workflows: context.workflows,
        env: runtime.env,
        host: options.host,
        port: parseWholeNumber(options.port, '--port', 0, 65535)!,
        runner: options.runner,
        concurrency: parseWholeNumber(options.concurrency, '--concurrency', 1, 64),
        docs,
        search,
        webRoot,
      });
      console.error(`quarry serve: listening on ${server.url} (store ${context.store.info().location}${server.runner ? `, runner ${server.runner.workerId}` : ', no runner'})`);
      await new Promise<void>((resolve) => {
        let signals = 0;
        const stop = () => {
          if (++signals > 1) process.exit(130);
          console.error('quarry serve: shutting down; running sessions go back to the queue…');
          void server.close().then(resolve);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
