/**
 * A worker process for durability tests: runs one session of the durability workflow and prints
 * the activation result as JSON. With HOLD_AT=n it stops forever when the n-th probed work starts
 * (after writing `held` to the probe log), so the parent can SIGKILL it at an exact step boundary.
 */
import { appendFileSync } from 'node:fs';
import { openStore } from '../../store/open-store.ts';
import { Runner } from '../runner.ts';
import { WorkflowRegistry } from '../workflow.ts';
import { durabilityWorkflow } from './durability-workflow.ts';
import { Probe } from './probe.ts';

const env = process.env;
const logFile = env.PROBE_LOG!;
const holdAt = env.HOLD_AT === undefined ? -1 : Number(env.HOLD_AT);
const probe = new Probe(logFile);
probe.hook = (key, index) => {
  if (index !== holdAt) return;
  appendFileSync(logFile, `held ${key}\n`);
  // A pending promise alone would let the process exit (the lease timers are unref'd): hold it open.
  setInterval(() => undefined, 60_000);
  return new Promise<void>(() => undefined);
};
const store = await openStore({ db: env.QUARRY_DB! });
const runner = new Runner({
  store,
  workflows: new WorkflowRegistry([durabilityWorkflow(probe)]),
  leaseTtlMs: Number(env.LEASE_TTL_MS ?? 15_000),
  workerId: `child-${process.pid}`,
});
const result = await runner.runSession(env.SESSION_ID!);
process.stdout.write(`${JSON.stringify(result)}\n`);
await store.close();
