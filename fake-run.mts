import { FakeOpenAiServer, systemOf, lastUserOf } from '/work/main/test/support/fake-openai-server.ts';
import { spawnSync } from 'node:child_process';
const server = await new FakeOpenAiServer((request) => {
  const system = systemOf(request);
  if (system.includes('You name research sessions')) return 'Tidal power';
  if (system.includes('You plan searches')) return JSON.stringify({ queries: ['tidal barrage', 'La Rance'] });
  if (system.includes('You extract facts')) return JSON.stringify({ notes: [] });
  if (system.includes('You judge coverage')) return JSON.stringify({ done: true, reason: 'covered', nextQueries: [] });
  if (system.includes('You structure reports')) return JSON.stringify({ title: 'Tidal power', sections: [{ title: 'Barrages', focus: 'x', noteIds: [] }] });
  return 'text [1].';
}).start();
const r = spawnSync(process.execPath, ['/work/main/bin/quarry.mjs', 'run', 'How does tidal power work?', '--docs', '/work/main/test/fixtures/corpus', '--iterations', '1'], { env: { ...process.env, QUARRY_HOME: '/tmp/qh3', QUARRY_MODEL: 'openai-compatible:fake', QUARRY_LLM_BASE_URL: server.baseUrl, QUARRY_LLM_API_KEY: 'k' }, encoding: 'utf8' });
console.log(r.status, r.stdout.slice(-1500), r.stderr.slice(-1500));
await server.stop();
