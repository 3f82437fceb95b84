import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from '@langchain/langgraph';
import { afterEach, describe, expect, it } from 'vitest';
import { QuarrySaver } from '../../src/langgraph/quarry-saver.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { saverLocation } from './saver-initializer.ts';
import { tidesGraph } from './tides-graph.ts';

const bin = join(fileURLToPath(new URL('../../', import.meta.url)), 'bin', 'quarry');

/** The built CLI on the saver's store (no model server in this process: a synchronous spawn is safe). */
function quarry(db: string, args: string[]) {
  const result = spawnSync(process.execPath, [bin, '--db', db, ...args], {
    env: childEnv(),
    encoding: 'utf8',
    timeout: within(60_000),
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('LangGraph threads in the CLI (issue 45)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('lists a thread with its status and shows where it stands, its state and its checkpoints', {
    timeout: within(120_000),
  }, async () => {
    const { location, drop } = saverLocation('sqlite');
    const saver = await QuarrySaver.open(location);
    cleanups.push(drop, () => saver.close());
    const app = tidesGraph(saver);
    const config = { configurable: { thread_id: 'tides-7' } };
    await app.invoke({}, config);

    const listed = quarry(location, ['ls']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/LangGraph thread tides-7\s+waiting/);
    const id = /^([0-9a-f]{8})\s+LangGraph thread tides-7/m.exec(listed.stdout)![1]!;

    const shown = quarry(location, ['show', id]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('LangGraph thread tides-7 (run by its graph');
    expect(shown.stdout).toContain('next: ask');
    expect(shown.stdout).toContain('waiting at an interrupt:');
    expect(shown.stdout).toContain('How many tides a day?');
    expect(shown.stdout).toContain('asked: "How many tides a day?"');
    expect(shown.stdout).toMatch(/Checkpoints \(newest first\):\n( {2}\S+ · step -?\d+ · \w+ · .+\n){3}/);

    const json = JSON.parse(quarry(location, ['--json', 'show', id]).stdout) as {
      type: string;
      next: string[];
      values: { asked: string };
      checkpoints: { step: number }[];
    };
    expect(json).toMatchObject({ type: 'langgraph-thread', next: ['ask'], values: { asked: 'How many tides a day?' } });
    let stored = 0;
    for await (const _tuple of saver.list(config)) stored += 1;
    expect(json.checkpoints.length).toBe(stored);

    await app.invoke(new Command({ resume: 2 }), config);
    expect(quarry(location, ['ls']).stdout).toMatch(/LangGraph thread tides-7\s+completed/);
    const done = quarry(location, ['show', id]);
    expect(done.stdout).toContain('next: nothing (the graph reached its end)');
    expect(done.stdout).toContain('count: 2');
  });

  it('exports a thread with its checkpoints: imported into another store, its graph carries on where it waited', {
    timeout: within(120_000),
  }, async () => {
    const graph = tidesGraph;
    const config = { configurable: { thread_id: 'tides-9' } };
    const here = saverLocation('sqlite');
    const there = saverLocation('sqlite');
    cleanups.push(here.drop, there.drop);
    const saver = await QuarrySaver.open(here.location);
    cleanups.push(() => saver.close());
    await graph(saver).invoke({}, config);
    const before = await graph(saver).getState(config);

    const id = /^([0-9a-f]{8})\s+LangGraph thread tides-9/m.exec(quarry(here.location, ['ls']).stdout)![1]!;
    const file = join(dirname(here.location), 'thread.json');
    const exported = quarry(here.location, ['export', id, '--format', 'json', '-o', file]);
    expect(exported.code, exported.stderr).toBe(0);
    const imported = quarry(there.location, ['import', file]);
    expect(imported.code, imported.stderr).toBe(0);

    const moved = await QuarrySaver.open(there.location);
    cleanups.push(() => moved.close());
    const after = await graph(moved).getState(config);
    expect(after.values).toEqual(before.values);
    expect(after.next).toEqual(['ask']);
    expect(after.tasks[0]?.interrupts[0]?.value).toBe('How many tides a day?');
    let history = 0;
    for await (const _tuple of moved.list(config)) history += 1;
    let original = 0;
    for await (const _tuple of saver.list(config)) original += 1;
    expect(history).toBe(original);
    await graph(moved).invoke(new Command({ resume: 3 }), config);
    expect((await graph(moved).getState(config)).values).toEqual({ asked: 'How many tides a day?', count: 3 });
    // The original is untouched; the same thread imported again is refused, and nothing is added.
    expect((await graph(saver).getState(config)).next).toEqual(['ask']);
    const again = quarry(there.location, ['import', file]);
    expect(again.code).toBe(5);
    expect(again.stderr).toContain('already has LangGraph thread "tides-9"');
    expect(quarry(there.location, ['ls']).stdout.match(/LangGraph thread tides-9/g)).toHaveLength(1);

    // A damaged file is refused whole, naming what is wrong, and adds nothing.
    const elsewhere = saverLocation('sqlite');
    cleanups.push(elsewhere.drop);
    const good = JSON.parse(readFileSync(file, 'utf8'));
    const notBase64 = JSON.parse(JSON.stringify(good));
    notBase64.checkpoints[0].body = '%%% not base64';
    const noThread = JSON.parse(JSON.stringify(good));
    delete noThread.session.externalId;
    for (const [data, field] of [
      [notBase64, 'checkpoints.0.body'],
      [noThread, 'checkpoints'],
    ] as const) {
      const bad = join(dirname(here.location), 'bad.json');
      writeFileSync(bad, JSON.stringify(data));
      const refused = quarry(elsewhere.location, ['import', bad]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(field);
      expect(quarry(elsewhere.location, ['ls']).stdout).not.toContain('tides-9');
    }

    // Imported by a user (as the API imports it), it is theirs: a saver opened as them carries it on.
    const added = quarry(elsewhere.location, ['users', 'add', 'ada']);
    expect(added.code, added.stderr).toBe(0);
    const theirs = quarry(elsewhere.location, ['--as', 'ada', 'import', file]);
    expect(theirs.code, theirs.stderr).toBe(0);
    const adas = await QuarrySaver.open(elsewhere.location, { user: 'ada' });
    cleanups.push(() => adas.close());
    expect((await graph(adas).getState(config)).next).toEqual(['ask']);
    await graph(adas).invoke(new Command({ resume: 2 }), config);
    expect((await graph(adas).getState(config)).values).toEqual({ asked: 'How many tides a day?', count: 2 });
  });
});
