/** The worker process of the crash benchmark: `crash-child.ts <workload> <folder> <log>`; B3 is slow. */
import { makeWork, workloads } from './crash-workloads.ts';

const [name, folder, log] = process.argv.slice(2) as [keyof typeof workloads, string, string];
await workloads[name](folder, makeWork(log, new Set(['B3'])));
