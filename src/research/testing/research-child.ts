/**
 * A worker process for research crash tests: runs one session of the research workflow (with the
 * providers the environment configures) and prints the activation result as JSON.
 */
import { resolveConfig } from '../../config/quarry-config.ts';
import { Runner } from '../../engine/runner.ts';
import { createWorkflowRegistry } from '../../service/research-runtime.ts';
import { openStore } from '../../store/open-store.ts';

const config = resolveConfig({ env: process.env });
const store = await openStore({ db: config.db });
const runner = new Runner({
  store,
  workflows: createWorkflowRegistry(store, config),
  leaseTtlMs: Number(process.env.LEASE_TTL_MS ?? 15_000),
  workerId: `child-${process.pid}`,
});
const result = await runner.runSession(process.env.SESSION_ID!);
process.stdout.write(`${JSON.stringify(result)}\n`);
await store.close();
