/**
 * Quarry against LangGraph.js checkpointers, one JSON file per session, and a bare insert: bytes on
 * disk after 50, 100 and 200 steps of ~10 KB, and per-step latency early (steps 1-20) and late
 * (steps 181-200) in a session. Run alone: `node --import tsx bench/compare/compare-steps.ts`.
 */
import { formatBytes, formatMs, median, percentile, pgBenchUrl, printTable, tempFolder } from '../bench-lib.ts';
import {
  bareSqlite,
  type Contender,
  dropSchema,
  jsonFile,
  langGraphContender,
  payloads,
  quarry,
} from './contenders.ts';

const ROUNDS = 3;

interface Place {
  location: string;
  remove(): Promise<void>;
}

async function place(postgres: boolean): Promise<Place> {
  if (postgres) {
    const url = new URL(pgBenchUrl);
    url.searchParams.set('schema', `quarry_cmp_${Math.random().toString(36).slice(2, 8)}`);
    return { location: url.toString(), remove: () => dropSchema(url.toString()) };
  }
  const folder = tempFolder('compare');
  return { location: folder.path, remove: async () => folder.remove() };
}

export async function run(): Promise<void> {
  const contenders: [Contender, boolean][] = [
    [quarry('sqlite'), false],
    [langGraphContender('sqlite'), false],
    [langGraphContender('sqlite', 'quarry'), false],
    [jsonFile, false],
    [bareSqlite, false],
    [quarry('postgres'), true],
    [langGraphContender('postgres'), true],
    [langGraphContender('postgres', 'quarry'), true],
  ];
  const steps = payloads(200);
  const payloadBytes = (count: number) =>
    steps.slice(0, count).reduce((sum, step) => sum + JSON.stringify(step).length, 0);
  const sizes: (string | number)[][] = [];
  const latency: string[][] = [];
  const quarryBytes = new Map<string, number>();
  for (const [contender, postgres] of contenders) {
    const row: string[] = [contender.name];
    for (const count of [50, 100, 200]) {
      const where = await place(postgres);
      try {
        await contender.run(where.location, 'session-1', steps.slice(0, count));
        const bytes = await contender.bytes(where.location);
        if (contender.name.startsWith('Quarry')) quarryBytes.set(`${postgres}-${count}`, bytes);
        const versusQuarry = bytes / (quarryBytes.get(`${postgres}-${count}`) ?? bytes);
        row.push(
          `${formatBytes(bytes)} (${(bytes / payloadBytes(count)).toFixed(1)}× payload, ${versusQuarry.toFixed(1)}× Quarry)`,
        );
      } finally {
        await where.remove();
      }
    }
    sizes.push(row);
    const early: number[] = [];
    const late: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const where = await place(postgres);
      try {
        const times = await contender.run(where.location, `session-${round}`, steps);
        early.push(...times.slice(0, 20));
        late.push(...times.slice(180, 200));
      } finally {
        await where.remove();
      }
    }
    latency.push([
      contender.name,
      formatMs(median(early)),
      formatMs(percentile(early, 99)),
      formatMs(median(late)),
      formatMs(percentile(late, 99)),
      `${(median(late) / median(early)).toFixed(1)}×`,
    ]);
  }
  printTable(
    `Bytes on disk after N steps of ~10 KB (payload: ${formatBytes(payloadBytes(50))}, ${formatBytes(payloadBytes(100))}, ${formatBytes(payloadBytes(200))})`,
    ['store', '50 steps', '100 steps', '200 steps'],
    sizes,
  );
  printTable(
    `Per-step latency, work start to next work start (${ROUNDS} sessions of 200 steps)`,
    ['store', 'steps 1-20 median', 'p99', 'steps 181-200 median', 'p99', 'late / early'],
    latency,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
