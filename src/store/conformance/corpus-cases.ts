import { expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import type { TestDatabase } from './harness.ts';

const hash = (text: string) => createHash('sha256').update(text).digest('hex');

function document(path: string, title: string, passages: string[]) {
  let offset = 0;
  return {
    path,
    title,
    kind: 'markdown',
    size: passages.join('\n\n').length,
    mtimeMs: 1_700_000_000_000,
    contentHash: hash(passages.join('')),
    chars: passages.join('\n\n').length,
    passages: passages.map((text) => {
      const passage = { start: offset, end: offset + text.length, text };
      offset += text.length + 2;
      return passage;
    }),
  };
}

export function corpusCases(use: () => TestDatabase): void {
  it('indexes documents and ranks the passage that answers a question first', async () => {
    const { store } = use();
    await store.upsertDocument(document('/docs/energy/solar.md', 'Solar power', [
      'Photovoltaic panels convert sunlight into electricity with efficiencies around twenty percent.',
      'Installation costs fell sharply during the last decade.',
    ]));
    await store.upsertDocument(document('/docs/energy/wind.md', 'Wind power', ['Wind turbines convert the kinetic energy of moving air into electricity.']));
    await store.upsertDocument(document('/docs/food/bread.md', 'Baking bread', ['Yeast ferments sugars and the dough rises before baking.']));
    const hits = await store.searchPassages({ query: 'How efficient are photovoltaic panels?' });
    expect(hits[0]).toMatchObject({ path: '/docs/energy/solar.md', title: 'Solar power', position: 0 });
    expect(hits[0]!.text).toContain('twenty percent');
    expect(hits[0]!.score).toBeGreaterThan(hits.at(-1)!.score - 1e-9);
    const scoped = await store.searchPassages({ query: 'electricity', pathPrefixes: ['/docs/energy/wind'] });
    expect(scoped.map((hit) => hit.path)).toEqual(['/docs/energy/wind.md']);
    expect(await store.searchPassages({ query: 'the of and' })).toEqual([]);
    expect(await store.searchPassages({ query: '" OR NEAR( * -' })).toEqual([]);
  });

  it('replaces a document on re-index, touches and removes documents', async () => {
    const { store } = use();
    await store.upsertDocument(document('/docs/a.md', 'A', ['The old wording mentions turbines.']));
    await store.upsertDocument(document('/docs/a.md', 'A', ['The new wording mentions batteries.']));
    expect(await store.searchPassages({ query: 'turbines' })).toEqual([]);
    expect((await store.searchPassages({ query: 'batteries' })).map((hit) => hit.path)).toEqual(['/docs/a.md']);
    await store.touchDocument({ path: '/docs/a.md', mtimeMs: 1_800_000_000_000, size: 99 });
    expect((await store.listDocuments({ pathPrefix: '/docs/' }))[0]).toMatchObject({ mtimeMs: 1_800_000_000_000, size: 99 });
    expect(await store.removeDocuments(['/docs/a.md', '/docs/missing.md'])).toBe(1);
    expect(await store.searchPassages({ query: 'batteries' })).toEqual([]);
    expect(await store.listDocuments()).toEqual([]);
  });
}
