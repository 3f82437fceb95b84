import { describe, expect, it } from 'vitest';
import { chunkText } from '../search/local-corpus/chunk-text.ts';
import { extractDocument } from './extract-document.ts';
import { kindFromContentType, kindFromPath } from './extracted-document.ts';

const encode = (text: string) => new TextEncoder().encode(text);

describe('CSV and TSV files as tables (issue 47)', () => {
  it('cuts rows into blocks, each under its header row, so a quoted row carries its column names', async () => {
    const rows = Array.from(
      { length: 60 },
      (_, index) => `Port ${index + 1},"${index % 2 ? 'semi-diurnal' : 'diurnal, mixed'}",${(index * 0.37).toFixed(2)}`,
    );
    const csv = `\uFEFFport,tide type,range (m)\n${rows.join('\n')}\n\n`;
    expect(kindFromPath('/docs/ports.CSV')).toBe('csv');
    expect(kindFromContentType('text/csv; charset=utf-8')).toBe('csv');
    const document = await extractDocument(encode(csv), 'csv', 'ports.csv');
    expect(document).toMatchObject({ title: 'ports', kind: 'csv' });
    // Each passage: the rows' heading, then the table (its header row first).
    const tables = chunkText(document.text)
      .filter((passage) => passage.text.includes('|'))
      .map((passage) => ({ ...passage, table: passage.text.slice(passage.text.indexOf('|')) }));
    expect(tables.length).toBeGreaterThan(2);
    for (const { table } of tables) expect(table.split('\n')[0]).toBe('| port | tide type | range (m) |');
    // Every row is in exactly one block, quoted cells whole (a comma inside quotes stays in its cell).
    const rowsQuoted = tables.flatMap(({ table }) => table.split('\n').slice(2));
    expect(rowsQuoted).toHaveLength(60);
    expect(rowsQuoted[0]).toBe('| Port 1 | diurnal, mixed | 0.00 |');
    expect(tables[0]!.headings).toContain('Rows 1–');
  });

  it('reads tab-separated values, and refuses an empty table', async () => {
    const document = await extractDocument(encode('a\tb\n1|2\t3\n'), 'csv', 'x.tsv');
    expect(document.text).toContain('| 1\\|2 | 3 |');
    await expect(extractDocument(encode('\n\n'), 'csv', 'empty.csv')).rejects.toThrow(/empty table/);
  });
});
