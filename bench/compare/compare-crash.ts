/**
 * Crash behaviour: a worker runs A, then B0-B3 in parallel, then C; it is killed with SIGKILL while
 * B3 runs (A, B0, B1, B2 completed). On resume, how many completed steps run again?
 * Run alone: `node --import tsx bench/compare/compare-crash.ts`.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printTable, tempFolder } from '../bench-lib.ts';
import { makeWork, workloads } from './crash-workloads.ts';

const here = fileURLToPath(new URL('.', import.meta.url));

function logLines(log: string): string[] {
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
}

async function measure(name: keyof typeof workloads): Promise<string[]> {
  const folder = tempFolder(`crash-${name}`);
  const log = join(folder.path, 'work.log');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'crash-child.ts'), name, folder.path, log], {
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const ready = () =>
      ['end A', 'end B0', 'end B1', 'end B2', 'start B3'].every((line) => logLines(log).includes(line));
    const deadline = Date.now() + 30_000;
    while (!ready() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 300)); // let the completed steps' own saving finish
    child.kill('SIGKILL');
    await exited;
    const completed = new Set(
      logLines(log)
        .filter((line) => line.startsWith('end '))
        .map((line) => line.slice(4)),
    );
    const before = logLines(log).length;
    await workloads[name](folder.path, makeWork(log, new Set()));
    const rerun = logLines(log)
      .slice(before)
      .filter((line) => line.startsWith('start '))
      .map((line) => line.slice(6));
    const repeated = rerun.filter((key) => completed.has(key));
    return [String(completed.size), String(repeated.length), repeated.join(', ') || '—', rerun.join(', ')];
  } finally {
    folder.remove();
  }
}

export async function run(): Promise<void> {
  const rows: string[][] = [];
  for (const [label, name] of [
    ['Quarry (SQLite)', 'quarry'],
    ['LangGraph SqliteSaver', 'langgraph'],
    ['JSON file, saved after each stage', 'json'],
  ] as const) {
    rows.push([label, ...(await measure(name))]);
  }
  printTable(
    'Crash behaviour: SIGKILL while B3 runs (A, B0, B1, B2 completed), then resume',
    ['store', 'completed before the kill', 'completed steps run again', 'which', 'steps run on resume'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
