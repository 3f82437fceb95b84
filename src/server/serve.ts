import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Runner } from '../engine/runner.ts';
import type { WorkflowRegistry } from '../engine/workflow.ts';
import { QuarryError } from '../store/errors.ts';
import type { Store } from '../store/store.ts';
import { createApp } from './app.ts';

export interface StartServerOptions {
  store: Store;
  workflows: WorkflowRegistry;
  env: NodeJS.ProcessEnv;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Run sessions in this process (default); false for API-only nodes. */
  runner: boolean;
  concurrency?: number;
  docs: string[];
  search: string[];
  webRoot?: string;
  heartbeatSeconds?: number;
}

export interface RunningServer {
  url: string;
  port: number;
  runner: Runner | undefined;
  /** Stops accepting requests, hands running sessions back to the queue, closes connections. */
  close(): Promise<void>;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** Starts the API (and the in-process runner, so runs continue with or without any client). */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const users = await options.store.listUsers();
  if (users.length === 0 && !isLoopback(options.host)) {
    throw new QuarryError(
      'INVALID_INPUT',
      `Refusing to serve on ${options.host} without users: anyone who can reach it could read and run research. Add a user first (quarry users add <name>; requests then need its token), or serve on 127.0.0.1.`,
      { details: { field: 'host' } },
    );
  }
  const runner = options.runner ? new Runner({ store: options.store, workflows: options.workflows, concurrency: options.concurrency }) : undefined;
  const app = createApp(
    { store: options.store, workflows: options.workflows, runner, env: options.env, defaults: { docs: options.docs, search: options.search }, heartbeatSeconds: options.heartbeatSeconds },
    { webRoot: options.webRoot },
  );
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const created = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, () => resolve(created));
    created.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  runner?.start();
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    runner,
    async close() {
      await runner?.shutdown({ handoff: true, graceMs: 5_000 });
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
