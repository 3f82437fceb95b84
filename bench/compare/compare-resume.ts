/**
 * Time to resume: open the store and reach the point where the next step can run, for sessions of
 * 200 and 10,000 steps of ~10 KB. Run alone: `node --import tsx bench/compare/compare-resume.ts`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatBytes, formatMs, median, printTable, tempFolder } from '../bench-lib.ts';
import { bareSqlite, type Contender, jsonFile, langGraphContender, payloads, quarry } from './contenders.ts';

const REPEATS = 5;

export async function run(): Promise<void> {
  const rows: string[][] = [];
  const big = payloads(10_000, 9);
  for (const contender of [
    quarry('sqlite'),
    langGraphContender('sqlite'),
    langGraphContender('sqlite', 'quarry'),
    jsonFile,
    bareSqlite,
  ] as Contender[]) {
    const row = [contender.name];
    for (const count of [200, 10_000]) {
      const folder = tempFolder('resume-compare');
      try {
        if (contender === jsonFile && count > 200) {
          // Rewriting the file after each of 10,000 steps writes ~500 GB; write the end state once.
          writeFileSync(
            join(folder.path, 'session-1.json'),
            JSON.stringify({ id: 'session-1', steps: big.map((output, index) => ({ key: `step-${index}`, output })) }),
          );
        } else if (contender.name === 'LangGraph SqliteSaver' && count > 200) {
          row.push(
            'not run: a checkpoint per step holds the whole state, so 10,000 steps would need ~500 GB (199 MB at 200 steps, growing with the square)',
          );
          continue;
        } else {
          await contender.run(folder.path, 'session-1', big.slice(0, count));
        }
        const times: number[] = [];
        for (let repeat = 0; repeat < REPEATS; repeat++)
          times.push(await contender.resume(folder.path, 'session-1', count));
        row.push(`${formatMs(median(times))} (${formatBytes(await contender.bytes(folder.path))} store)`);
      } finally {
        folder.remove();
      }
    }
    rows.push(row);
  }
  printTable(
    `Time to resume: open the store and reach the next step (median of ${REPEATS})`,
    ['store', '200 steps', '10,000 steps'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
