import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { relative, resolve, sep } from 'node:path';
import { serve } from '@hono/node-server';
import type { Log } from '../config/log.ts';
import type { QuarryConfig } from '../config/quarry-config.ts';
import { Runner } from '../engine/runner.ts';
import { backgroundIndexer, documentRoots } from '../service/document-folders.ts';
import { PdfPrinter } from '../service/print-pdf.ts';
import { createWorkflowRegistry } from '../service/research-runtime.ts';
import { invalidInput, QuarryError } from '../shared/errors.ts';
import type { Store } from '../store/store.ts';
import { createApp } from './app.ts';
import { AuthThrottle, CLIENT_TIMEOUTS, type ClientTimeouts, limitConnections } from './client-limits.ts';
import { allowedHostNames, isLoopback } from './request-guard.ts';
import type { Exposure } from './server-env.ts';

export interface StartServerOptions {
  store: Store;
  config: QuarryConfig;
  /** Run sessions in this process (default); false for API-only nodes. */
  runner: boolean;
  concurrency?: number;
  webRoot?: string;
  heartbeatSeconds?: number;
  /** Where the server's lines for the operator go (and its runner's). Default: standard error. */
  log?: Log;
  /** Keep the document folders indexed as their files change (`serve --watch`). */
  watch?: boolean;
  /** How long slow clients are given (`CLIENT_TIMEOUTS`); tests shorten them. */
  clientTimeouts?: ClientTimeouts;
}

export interface RunningServer {
  url: string;
  port: number;
  exposure: Exposure;
  runner: Runner | undefined;
  /** Stops accepting requests, hands running sessions back to the queue, closes connections. */
  close(): Promise<void>;
}

/** Why the server could not listen, in words an operator acts on (`INVALID_INPUT`: exit 2). */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): unknown {
  const where = `${host}:${port}`;
  if (error.code === 'EADDRINUSE')
    return new QuarryError('INVALID_INPUT', `Port ${port} on ${host} is already in use; choose another with --port.`, {
      details: { field: 'port' },
    });
  if (error.code === 'EACCES')
    return new QuarryError('INVALID_INPUT', `Not allowed to listen on ${where}; use a port above 1023 (--port).`, {
      details: { field: 'port' },
    });
  if (error.code === 'EADDRNOTAVAIL')
    return new QuarryError('INVALID_INPUT', `${host} is not an address of this machine; choose another with --host.`, {
      details: { field: 'host' },
    });
  return error;
}

/**
 * Starts the API (and the in-process runner, so runs continue with or without any client). Who can
 * reach it is fixed now (`Exposure`); who a request acts as is decided per request (`auth.ts`): on
 * a loopback-only server, the one local user while the store has no users; otherwise a token.
 * Document roots are indexed in the background.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { host, port: wantedPort, publicNames, publicUrl, trustProxy } = options.config.server;
  const log = options.log ?? ((message: string) => console.error(message));
  const timeouts = options.clientTimeouts ?? CLIENT_TIMEOUTS;
  // A trusted proxy serves it to others: never loopback-only, whatever address it is bound to.
  const exposure: Exposure =
    isLoopback(host) && publicNames.length === 0 && !publicUrl && !trustProxy ? 'loopback' : 'public';
  if (exposure === 'public' && !(await options.store.hasUsers())) {
    log(
      `quarry serve: no users yet, so nobody can sign in. Add one (quarry users add <name>); its token works at once.`,
    );
  }
  const roots = documentRoots(options.config.docs);
  // Users' libraries must not lie where a folder everyone searches would index them: inside a root
  // other than under a hidden folder (which indexing never walks: ~/.quarry/library under --docs ~),
  // or holding a root. Named explicitly, they are refused per request (`rootOf`).
  const library = resolve(options.config.library);
  const overlapping = roots.find((root) => {
    if (`${root.path}${sep}`.startsWith(`${library}${sep}`)) return true;
    if (!`${library}${sep}`.startsWith(`${root.path}${sep}`)) return false;
    return !relative(root.path, library)
      .split(sep)
      .some((segment) => segment.startsWith('.'));
  });
  if (overlapping)
    throw invalidInput(
      'QUARRY_LIBRARY',
      `${library} and the document folder ${overlapping.path} overlap: users' libraries would be searched by everyone. Keep them apart.`,
    );
  // One browser for every PDF export, started on the first (`print-pdf.ts`).
  const printer = new PdfPrinter();
  const indexer = backgroundIndexer(options.store, log);
  const workflows = createWorkflowRegistry(options.store, options.config, {
    indexReady: (folders, signal, onProgress) => indexer.ready(folders, signal, onProgress),
  });
  const runner = options.runner
    ? new Runner({ store: options.store, workflows, concurrency: options.concurrency, log: options.log })
    : undefined;
  const app = createApp(
    {
      store: options.store,
      config: options.config,
      workflows,
      runner,
      folders: { kind: 'roots', roots },
      indexer,
      exposure,
      secureCookies: publicUrl?.startsWith('https:') ?? false,
      allowedHosts: allowedHostNames(host, [...publicNames, ...(publicUrl ? [new URL(publicUrl).host] : [])]),
      authThrottle: new AuthThrottle(),
      printer,
      heartbeatSeconds: options.heartbeatSeconds,
      log: options.log,
    },
    { webRoot: options.webRoot },
  );
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const created = serve(
      {
        fetch: app.fetch,
        hostname: host,
        port: wantedPort,
        // Timeouts are checked every 2 s, not Node's 30: a client trickling its headers was held 50 s and more.
        serverOptions: { connectionsCheckingInterval: timeouts.checkEveryMs, headersTimeout: timeouts.headersMs },
      },
      () => resolve(created),
    );
    created.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, wantedPort)));
  });
  limitConnections(server as Server, options.config.server.connectionsPerClient, trustProxy, timeouts);
  const port = (server.address() as AddressInfo).port;
  // Only once the port is ours: the folders are indexed in the background and runs start.
  await indexer.ensure(roots.map((root) => root.path));
  // A change while its folder is being indexed is indexed again after it.
  const watch =
    options.watch && roots.length
      ? await (await import('../service/watch-folders.ts')).watchFolders(
          roots.map((root) => root.path),
          (folder) => void indexer.ready([folder]).then(() => indexer.ensure([folder])),
        )
      : null;
  await watch?.ready;
  runner?.start();
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    exposure,
    runner,
    async close() {
      await runner?.shutdown({ handoff: true, graceMs: 5_000 });
      await watch?.close();
      await indexer.close();
      await printer.close();
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
