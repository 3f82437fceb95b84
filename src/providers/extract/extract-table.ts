import type { ExtractedDocument } from './extracted-document.ts';

/**
 * A CSV or TSV file as tables a reader can cite: blocks of rows, each under the header row, so a
 * quoted row always carries its column names. Each block is one paragraph (one passage) of about
 * `BLOCK_CHARS` characters, headed by the rows it holds.
 */
const BLOCK_CHARS = 800;

/** A cell as a Markdown table cell: one line, its pipes escaped. */
function cell(value: unknown): string {
  return String(value ?? '')
    .replace(/\s+/g, ' ')
    .replace(/\|/g, '\\|')
    .trim();
}

export async function extractTable(
  text: string,
  fallbackTitle: string,
  delimiter?: string,
): Promise<ExtractedDocument> {
  const { default: Papa } = await import('papaparse');
  const parsed = Papa.parse<string[]>(text.replace(/^\uFEFF/, ''), { skipEmptyLines: 'greedy', delimiter });
  const rows = parsed.data.filter((row) => row.some((value) => String(value).trim()));
  const [header, ...body] = rows;
  if (!header) throw new Error('an empty table (no header row)');
  const line = (row: readonly unknown[]) => `| ${header.map((_, index) => cell(row[index])).join(' | ')} |`;
  const head = `${line(header)}\n|${header.map(() => ' --- |').join('')}`;
  const out = [`# ${fallbackTitle}`];
  let block: string[] = [];
  let first = 1;
  const flush = (last: number) => {
    if (block.length === 0) return;
    out.push(first === last ? `## Row ${first}` : `## Rows ${first}–${last}`, `${head}\n${block.join('\n')}`);
    block = [];
    first = last + 1;
  };
  body.forEach((row, index) => {
    block.push(line(row));
    if (block.join('\n').length + head.length >= BLOCK_CHARS) flush(index + 1);
  });
  flush(body.length);
  return { title: fallbackTitle, text: out.join('\n\n'), linkRanges: [], kind: 'csv' };
}
