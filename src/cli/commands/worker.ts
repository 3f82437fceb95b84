import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import { parseWholeNumber } from '../parse-options.ts';

/** A worker process: claims runnable sessions from the store and runs them until told to stop. */
export function registerWorker(program: Command, runtime: CliRuntime): void {
  program
    .command('worker')
    .description('run queued sessions from the store (many workers may share one store)')
    .option('--concurrency <n>', 'sessions run at once (1-64)', '4')
    .option('--id <name>', "this worker's name in leases")
    .option('--grace <seconds>', 'on SIGTERM, let steps in flight finish this long before handing sessions back', '10')
    .option(
      '--lease-ttl <seconds>',
      "how long a claim lasts without a heartbeat; a dead worker's sessions wait this long",
      '15',
    )
    .option('--max-claims <n>', 'claims without a clean end before a session is parked as failed', '5')
    .option(
      '--metrics-port <port>',
      'serve Prometheus metrics at http://<metrics-host>:<port>/metrics (0: any free port)',
    )
    .option('--metrics-host <host>', 'the address the metrics port listens on', '127.0.0.1')
    .action(
      async (options: {
        concurrency: string;
        id?: string;
        grace: string;
        leaseTtl: string;
        maxClaims: string;
        metricsPort?: string;
        metricsHost: string;
      }) => {
        const { Runner } = await import('../../engine/runner.ts');
        const context = await runtime.openRunner();
        const concurrency = parseWholeNumber(options.concurrency, '--concurrency', 1, 64)!;
        const graceMs = parseWholeNumber(options.grace, '--grace', 0, 3600)! * 1000;
        const leaseTtlMs = parseWholeNumber(options.leaseTtl, '--lease-ttl', 1, 3600)! * 1000;
        const maxClaims = parseWholeNumber(options.maxClaims, '--max-claims', 1, 1000)!;
        const metricsPort = parseWholeNumber(options.metricsPort, '--metrics-port', 0, 65535);
        // Loaded by the commands that use them, not by every command's start (pino, prom-client).
        const { processLog } = await import('../../config/log.ts');
        const log = processLog();
        const runner = new Runner({
          log,
          store: context.admin,
          workflows: context.workflows,
          concurrency,
          workerId: options.id,
          leaseTtlMs,
          maxClaims,
        });
        runner.start();
        const metrics =
          metricsPort === undefined
            ? null
            : await (await import('../../server/metrics-listener.ts')).serveMetrics(
                (await import('../../server/metrics.ts')).serverMetrics({ store: context.admin, runner }),
                { host: options.metricsHost, port: metricsPort, token: context.config.server.metricsToken },
              );
        if (metrics)
          log(`quarry worker ${runner.workerId}: metrics at ${metrics.url}`, undefined, { workerId: runner.workerId });
        log(
          `quarry worker ${runner.workerId}: running up to ${concurrency} sessions from ${context.store.info().location}. SIGTERM hands sessions back; Ctrl-C twice quits at once.`,
          undefined,
          { workerId: runner.workerId },
        );
        // The runner's timers do not hold the process open (they must not keep a finished command
        // alive); the worker does, until it is told to stop, even while the database is away.
        const keepAlive = setInterval(() => undefined, 60_000);
        await new Promise<void>((resolve) => {
          let signals = 0;
          const stop = () => {
            if (++signals > 1) process.exit(130);
            log(`quarry worker ${runner.workerId}: stopping; handing sessions back…`, undefined, {
              workerId: runner.workerId,
            });
            void runner.shutdown({ handoff: true, graceMs }).then(() => {
              metrics?.close();
              clearInterval(keepAlive);
              resolve();
            });
          };
          process.on('SIGTERM', stop);
          process.on('SIGINT', stop);
        });
      },
    );
}
