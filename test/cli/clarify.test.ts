import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { exitCodes } from '../../src/cli/error-to-exit-code.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { fakeModelEnv } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = join(root, 'test', 'fixtures', 'corpus');
let home: string;
let fake: FakeOpenAiServer;

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'quarry-clarify-'));
  fake = await new FakeOpenAiServer(schemaFakeModel()).start();
});
afterEach(async () => {
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

it('quarry run --clarify asks first, and quarry ask answers and runs the research on', {
  timeout: within(60_000),
}, async () => {
  // Asynchronous: the fake model answers from this process, which a synchronous spawn would block.
  const quarry = (args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [join(root, 'bin', 'quarry'), ...args],
        {
          env: {
            ...childEnv({ QUARRY_HOME: home }),
            ...fakeModelEnv(fake.baseUrl),
          },
          encoding: 'utf8',
          timeout: within(30_000),
        },
        (error, stdout, stderr) =>
          resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
      );
    });
  const asked = await quarry([
    'run',
    'How does tidal power work?',
    '--docs',
    fixtures,
    '--iterations',
    '1',
    '--clarify',
  ]);
  expect(asked.status, asked.stderr).toBe(exitCodes.waiting);
  expect(asked.stdout).toContain('Before I start, a few questions');
  const short = /quarry ask (\w+) skip/.exec(asked.stdout)?.[1];
  expect(short, asked.stdout).toBeDefined();
  expect((await quarry(['show', short!])).stdout).toContain('Before I start, a few questions');

  const answered = await quarry(['ask', short!, 'Only barrages in France, please.']);
  expect(answered.status, answered.stderr).toBe(0);
  expect(answered.stdout).toContain('## Sources');
  // The questions and the answer stay in the conversation (issue 46).
  expect((await quarry(['show', short!])).stdout).toMatch(
    /\n {2}user: How does tidal power work\?\n {2}assistant: Before I start, a few questions[\s\S]*\n {2}user: Only barrages in France, please\.\n {2}assistant: /,
  );
});
