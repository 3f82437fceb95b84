import { afterEach, describe, expect, it } from 'vitest';
import { ExtractPool } from './extract-pool.ts';

const page = (title: string, size: number) =>
  new TextEncoder().encode(`# ${title}\n\n${'Tides rise and fall twice a day. '.repeat(Math.ceil(size / 32))}\n`);

describe('the extract pool', () => {
  let pool: ExtractPool | undefined;
  afterEach(async () => {
    await pool?.close();
  });

  it('reads a small folder on this thread, starting no worker, and starts its workers past that', async () => {
    pool = ExtractPool.open(2);
    const small = await Promise.all(
      Array.from({ length: 4 }, (_, index) => pool!.read(page(`Note ${index}`, 2_000), 'markdown', `note-${index}.md`)),
    );
    expect(small.map((document) => document.title)).toEqual(['Note 0', 'Note 1', 'Note 2', 'Note 3']);
    expect(pool.threads).toBe(0);
    // A manual's worth: the threads start, and read it as this thread would.
    const large = await pool.read(page('Manual', 300_000), 'markdown', 'manual.md');
    expect(pool.threads).toBe(2);
    expect(large.title).toBe('Manual');
  });
});
