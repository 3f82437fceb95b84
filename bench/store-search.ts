/**
 * Searching sessions by text: the title, the question and what the research wrote (its reports and
 * answers, scanned with LIKE), over 1,000 and 5,000 sessions with a 30 KB report each, on SQLite;
 * beside the same search over titles and questions only.
 * Run alone: `node --import tsx bench/store-search.ts`.
 */
import { join } from 'node:path';
import { openStore } from '../src/store/open-store.ts';
import { median, pageText, printTable, seededRandom, tempFolder, timeMs } from './bench-lib.ts';

async function measure(count: number): Promise<string[]> {
  const folder = tempFolder('search');
  const store = await openStore({ db: join(folder.path, 'quarry.db') });
  try {
    const random = seededRandom(7);
    for (let index = 0; index < count; index++) {
      const session = await store.createSession({
        ownerId: 'local',
        title: `Session ${index}`,
        question: `Question ${index} about batteries`,
        workflow: { name: 'research', version: 1 },
        message: { role: 'user', content: `Question ${index} about batteries` },
      });
      const report = pageText(random, 30_000) + (index === 17 ? ' zeppelinology' : '');
      await store.appendMessage({ sessionId: session.id, role: 'assistant', content: report });
    }
    const inReports: number[] = [];
    const inTitles: number[] = [];
    for (let round = 0; round < 9; round++) {
      inReports.push(await timeMs(() => store.listSessions({ ownerId: 'local', search: 'zeppelinology', limit: 50 })));
      inTitles.push(await timeMs(() => store.listSessions({ ownerId: 'local', search: 'Session 4242', limit: 50 })));
    }
    const found = (await store.listSessions({ ownerId: 'local', search: 'zeppelinology' })).sessions.length;
    return [String(count), `${median(inReports).toFixed(1)} ms`, `${median(inTitles).toFixed(1)} ms`, String(found)];
  } finally {
    await store.close();
    folder.remove();
  }
}

export async function run(): Promise<void> {
  console.log(
    '\nInputs: sessions with one 30 KB report each (generated prose); one report holds the word searched for.',
  );
  const rows: string[][] = [];
  for (const count of [1_000, 5_000]) rows.push(await measure(count));
  printTable(
    'Session search by text (SQLite): a word only a report holds, and a title search, both scanning reports',
    ['sessions', 'a word in one report, median', 'a title (every report scanned too), median', 'found'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
