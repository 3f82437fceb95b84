/**
 * A worker process for research crash tests: runs one session of the research workflow (with the
 * providers the environment configures) and prints the activation result as JSON. With
 * STEP_PAUSE_MS set, it pauses that long after each step it journals, so a test can kill it
 * mid-research however fast the research runs on the machine.
 */

import { resolveConfig } from '../../config/quarry-config.ts';
import { Runner } from '../../engine/runner.ts';
import { createWorkflowRegistry } from '../../service/research-runtime.ts';
import { openStore } from '../../store/open-store.ts';
import type { Store } from '../../store/store.ts';

const config = resolveConfig({ env: process.env });
const store = pausedAfterSteps(await openStore({ db: config.db }), Number(process.env.STEP_PAUSE_MS ?? 0));
const runner = new Runner({
  store,
  workflows: createWorkflowRegistry(store, config),
  leaseTtlMs: Number(process.env.LEASE_TTL_MS ?? 15_000),
  workerId: `child-${process.pid}`,
});
const result = await runner.runSession(process.env.SESSION_ID!);
process.stdout.write(`${JSON.stringify(result)}\n`);
await store.close();

function pausedAfterSteps(inner: Store, pauseMs: number): Store {
  if (pauseMs <= 0) return inner;
  const pause = () => new Promise((resolve) => setTimeout(resolve, pauseMs));
  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property !== 'completeStep' && property !== 'recordStep') return value.bind(target);
      return async (...args: unknown[]) => {
        const step = await value.apply(target, args);
        await pause();
        return step;
      };
    },
  });
}
