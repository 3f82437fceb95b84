/**
 * When a chat client sees the answer: a research streamed through POST /v1/chat/completions
 * against a real server whose model is a local fake answering each call after a fixed latency (two
 * latencies, so runs of two lengths). It prints the time to the first progress line, to the first
 * content token and to the end, with the share of the run a reader waits before text appears.
 * Before answers streamed, the first content token came at the end (share 100%).
 * Run alone: `node --import tsx bench/answer-stream.ts`.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../src/server/serve.ts';
import { sqliteHarness } from '../src/store/sqlite/sqlite-harness.ts';
import { FakeOpenAiServer } from '../test/support/fake-openai-server.ts';
import { schemaFakeModel } from '../test/support/schema-fake-model.ts';
import { testConfig } from '../test/support/test-config.ts';
import { envInteger, formatMs, median, printTable, tempFolder } from './bench-lib.ts';

const fixtures = fileURLToPath(new URL('../test/fixtures/corpus/', import.meta.url));
const RUNS = envInteger('BENCH_RUNS', 5);
const LATENCIES_MS = [50, 200];
const questions = [
  'How does tidal power generate electricity?',
  'How do calderas form, and how do they differ from craters?',
  'How do honeybees communicate where food is?',
];

async function measure(url: string, question: string) {
  const started = performance.now();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'quarry', stream: true, messages: [{ role: 'user', content: question }] }),
  });
  const sessionId = response.headers.get('x-quarry-session-id')!;
  let firstProgress = 0;
  let firstContent = 0;
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const data = buffer.slice(buffer.indexOf('data:') + 5, end).trim();
      buffer = buffer.slice(end + 2);
      if (data === '[DONE]' || !data.startsWith('{')) continue;
      const delta = JSON.parse(data).choices?.[0]?.delta ?? {};
      if (delta.reasoning_content && !firstProgress) firstProgress = performance.now() - started;
      if (delta.content && !firstContent) firstContent = performance.now() - started;
    }
  }
  return { sessionId, firstProgress, firstContent, total: performance.now() - started };
}

async function main() {
  const folder = tempFolder('quarry-bench-stream-');
  cpSync(fixtures, join(folder.path, 'docs'), { recursive: true });
  const database = await sqliteHarness.create();
  console.log(
    `answer-stream: ${RUNS} runs per model latency (${LATENCIES_MS.join(' and ')} ms a call), ${questions.length} questions in turn, default settings`,
  );
  const rows: (string | number)[][] = [];
  try {
    for (const latency of LATENCIES_MS) {
      const fake = await new FakeOpenAiServer(schemaFakeModel(), { delayMs: latency }).start();
      const server = await startServer({
        store: database.store,
        config: testConfig({
          QUARRY_DOCS: join(folder.path, 'docs'),
          QUARRY_PORT: '0',
          QUARRY_MODEL: 'openai-compatible:fake',
          QUARRY_LLM_BASE_URL: fake.baseUrl,
          QUARRY_LLM_API_KEY: 'k',
        }),
        runner: true,
        log: () => undefined,
      });
      const results = [];
      for (let run = 0; run < RUNS; run++)
        results.push(await measure(server.url, `${questions[run % questions.length]} (run ${latency}-${run})`));
      await server.close();
      await fake.stop();
      const total = median(results.map((result) => result.total));
      const content = median(results.map((result) => result.firstContent));
      rows.push([
        `${latency} ms`,
        Math.round(fake.calls.length / RUNS),
        formatMs(median(results.map((result) => result.firstProgress))),
        formatMs(content),
        formatMs(total),
        `${Math.round((content / total) * 100)}%`,
      ]);
    }
  } finally {
    await database.destroy();
    folder.remove();
  }
  printTable(
    'Time to the answer over /v1/chat/completions (medians; before streaming, first content = end)',
    ['model latency', 'calls a run', 'first progress', 'first content', 'end', 'wait share'],
    rows,
  );
}

await main();
