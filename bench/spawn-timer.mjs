// Times fresh node processes for bench/cli-start.ts, from a small process of its own: spawning from a
// parent that holds hundreds of MB (the benchmark runner, after the other benchmarks) costs tens of
// milliseconds more per spawn (the fork copies its page tables), which inflated the bare-node limit.
// Reads { runs, cwd, commands: [{ args, env }] } as JSON on stdin; writes each command's wall times
// in ms as JSON. One unmeasured warm-up each (the file cache), then the commands take turns, a round
// of each at a time, so a busy moment weighs on the limit and the commands alike.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const { runs, cwd, commands } = JSON.parse(readFileSync(0, 'utf8'));

function wallTime({ args, env }) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd, env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return ms;
}

for (const command of commands) wallTime(command);
const all = commands.map(() => []);
for (let round = 0; round < runs; round++) {
  for (const [index, command] of commands.entries()) all[index].push(wallTime(command));
}
process.stdout.write(JSON.stringify(all));
