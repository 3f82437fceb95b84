import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { QUARRY_VERSION } from '../config/version.ts';
import type { ActivationStatus } from '../engine/activation.ts';
import type { Runner } from '../engine/runner.ts';
import { onOperation } from '../shared/operations.ts';
import type { Store } from '../store/store.ts';

/**
 * What an operator scrapes at `/metrics` (Prometheus text format): the queue by status across every
 * user (read from the store at each scrape, so every node of a fleet reports the same queue), this
 * process's runner (sessions it runs, its concurrency), the event streams it holds open, and Node's
 * own process metrics; and what this process did since it started (runs, steps, tokens, lease
 * claims, store retries, how late events reached their streams), from `shared/operations.ts`.
 * Counts only: no session, user or document text.
 *
 * A scrape never waits on the store for long: when the store gives no answer within
 * `STORE_READ_MS` (a database outage, where the store's own retries would take many seconds), the
 * series read from it are left out and `quarry_store_reachable` is 0; everything this process knows
 * by itself is still there.
 */
export interface ServerMetrics {
  registry: Registry;
  /** Call when an event stream opens; call what it returns when it closes. */
  streamOpened(): () => void;
}

/** How long a scrape waits for the store's counts before it answers without them. */
export const STORE_READ_MS = 500;

/** Every way an activation ends, so each `quarry_runs_ended_total` series exists from zero. */
const RUN_END_STATUSES = [
  'completed',
  'waiting',
  'queued',
  'interrupted',
  'failed',
  'lease-lost',
  'unrecorded',
] as const satisfies readonly ActivationStatus[];
// A status added to ActivationStatus and not listed above does not compile.
const everyStatusListed: [Exclude<ActivationStatus, (typeof RUN_END_STATUSES)[number]>] extends [never] ? true : false =
  true;
void everyStatusListed;

/**
 * The store's session counts for this scrape, or null when it does not answer within
 * `STORE_READ_MS`. One read at a time: a scrape during an outage waits on the read already under
 * way rather than piling up another.
 */
function storeCounts(store: Store): () => Promise<Record<string, number> | null> {
  let reading: Promise<Record<string, number> | null> | null = null;
  return async () => {
    reading ??= store.countSessionsByStatus().then(
      (counts) => counts,
      () => null,
    );
    const read = reading;
    void read.finally(() => {
      if (reading === read) reading = null;
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), STORE_READ_MS);
    });
    try {
      return await Promise.race([read, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}

export function serverMetrics(dependencies: { store: Store; runner?: Runner }): ServerMetrics {
  const registry = new Registry();
  const counts = storeCounts(dependencies.store);
  // Both store gauges of one scrape share its read.
  let scrapeRead: Promise<Record<string, number> | null> | null = null;
  const readOnce = () => {
    scrapeRead ??= counts().finally(() => setImmediate(() => (scrapeRead = null)));
    return scrapeRead;
  };
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
      const read = await readOnce();
      // Left out when the store did not answer: an old count presented as current would mislead.
      this.reset();
      for (const [status, count] of Object.entries(read ?? {})) this.set({ status }, count);
    },
  });
  new Gauge({
    name: 'quarry_store_reachable',
    help: `1 when the store answered this scrape's read within ${STORE_READ_MS} ms, 0 when it did not (quarry_sessions is then left out).`,
    registers: [registry],
    async collect() {
      this.set((await readOnce()) === null ? 0 : 1);
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
  const runsStarted = new Counter({
    name: 'quarry_runs_started_total',
    help: "Activations this process's runner started (a run resumed after a crash or a hand-over starts again).",
    registers: [registry],
  });
  const runsEnded = new Counter({
    name: 'quarry_runs_ended_total',
    help: 'Activations that ended here, by how: completed, waiting (for input), interrupted, queued (handed over), failed, lease-lost, unrecorded.',
    labelNames: ['status'],
    registers: [registry],
  });
  const steps = new Histogram({
    name: 'quarry_step_duration_seconds',
    help: 'Live steps (replayed ones are not run) by kind (task, llm, input…) and how they ended.',
    labelNames: ['kind', 'status'],
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const tokens = new Counter({
    name: 'quarry_model_tokens_total',
    help: 'Tokens of completed model steps, by model and direction (input, output).',
    labelNames: ['model', 'direction'],
    registers: [registry],
  });
  const cost = new Counter({
    name: 'quarry_model_cost_usd_total',
    help: 'Cost of completed model steps in dollars, by model (with QUARRY_PRICE_PER_MTOK or a known price).',
    labelNames: ['model'],
    registers: [registry],
  });
  const claims = new Counter({
    name: 'quarry_lease_claims_total',
    help: 'Sessions this process claimed; takeover="true" when it took over a dead holder\'s lease.',
    labelNames: ['takeover'],
    registers: [registry],
  });
  const storeRetries = new Counter({
    name: 'quarry_store_retries_total',
    help: 'Store calls tried again after a busy or unreachable database, by error code.',
    labelNames: ['code'],
    registers: [registry],
  });
  const lag = new Histogram({
    name: 'quarry_event_delivery_lag_seconds',
    help: "From an event's commit to its write on an event stream of this process (the database's clock against this one's).",
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  // Every series a query names exists from zero: `increase()` over a series that first appears at 1
  // reads 0, so the first takeover would never show.
  for (const status of RUN_END_STATUSES) runsEnded.inc({ status }, 0);
  for (const takeover of ['true', 'false']) claims.inc({ takeover }, 0);
  for (const code of ['STORE_BUSY', 'STORE_UNAVAILABLE']) storeRetries.inc({ code }, 0);
  onOperation((signal) => {
    switch (signal.type) {
      case 'run-start':
        return runsStarted.inc();
      case 'run-end':
        return runsEnded.inc({ status: signal.status });
      case 'step-end':
        steps.observe({ kind: signal.kind, status: signal.status }, signal.durationMs / 1000);
        if (signal.model) {
          if (signal.inputTokens) tokens.inc({ model: signal.model, direction: 'input' }, signal.inputTokens);
          if (signal.outputTokens) tokens.inc({ model: signal.model, direction: 'output' }, signal.outputTokens);
          if (signal.costUsd) cost.inc({ model: signal.model }, signal.costUsd);
        }
        return;
      case 'lease-claim':
        return claims.inc({ takeover: String(signal.takeover) });
      case 'store-retry':
        return storeRetries.inc({ code: signal.code });
      case 'event-delivered':
        return lag.observe(signal.lagMs / 1000);
    }
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
