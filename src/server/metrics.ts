import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { QUARRY_VERSION } from '../config/version.ts';
import type { Runner } from '../engine/runner.ts';
import type { Store } from '../store/store.ts';

/**
 * What an operator scrapes at `/metrics` (Prometheus text format): the queue by status across every
 * user (read from the store at each scrape, so every node of a fleet reports the same queue), this
 * process's runner (sessions it runs, its concurrency), the event streams it holds open, and Node's
 * own process metrics. Counts only: no session, user or document text.
 */
export interface ServerMetrics {
  registry: Registry;
  /** Call when an event stream opens; call what it returns when it closes. */
  streamOpened(): () => void;
}

export function serverMetrics(dependencies: { store: Store; runner?: Runner }): ServerMetrics {
  const registry = new Registry();
  // Node's process metrics under their usual names (process_*, nodejs_*), as dashboards expect them.
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'quarry_info',
    help: 'This Quarry process: its version and store backend (always 1).',
    labelNames: ['version', 'store'],
    registers: [registry],
  }).set({ version: QUARRY_VERSION, store: dependencies.store.info().backend }, 1);
  new Gauge({
    name: 'quarry_sessions',
    help: "Every user's sessions by status, as listings show them (a running session whose lease lapsed is interrupted).",
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const counts = await dependencies.store.countSessionsByStatus();
      for (const [status, count] of Object.entries(counts)) this.set({ status }, count);
    },
  });
  const { runner } = dependencies;
  new Gauge({
    name: 'quarry_runner_active_sessions',
    help: "Sessions this process's runner is running now (0 without a runner).",
    registers: [registry],
    collect() {
      this.set(runner?.activeSessions().length ?? 0);
    },
  });
  new Gauge({
    name: 'quarry_runner_concurrency',
    help: "How many sessions this process's runner runs at once (0 without a runner).",
    registers: [registry],
    collect() {
      this.set(runner?.running ? runner.concurrencyLimit : 0);
    },
  });
  const streams = new Gauge({
    name: 'quarry_event_streams',
    help: 'Event streams (SSE: session events, feeds, streamed chat and MCP answers) open on this process.',
    registers: [registry],
  });
  return {
    registry,
    streamOpened() {
      streams.inc();
      let closed = false;
      return () => {
        if (closed) return;
        closed = true;
        streams.dec();
      };
    },
  };
}
