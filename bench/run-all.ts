/**
 * Runs every benchmark in turn and prints their tables: `npm run bench`. Each script also runs
 * alone (`node --import tsx bench/<name>.ts`). Numbers, never assertions.
 */
import { cpus, totalmem } from 'node:os';

const scripts = ['store-storage', 'store-listing', 'store-commit-latency', 'engine-overhead', 'engine-resume', 'corpus-index', 'api-load', 'workers'];

console.log(`# Quarry benchmarks\n\n${new Date().toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · ${(totalmem() / 2 ** 30).toFixed(0)} GB`);
const only = process.argv.slice(2);
for (const name of scripts) {
  if (only.length > 0 && !only.includes(name)) continue;
  const module = (await import(`./${name}.ts`)) as { run(): Promise<void> };
  await module.run();
}
