import type { DocumentKind, ExtractedDocument } from './extracted-document.ts';
import type { Sheet } from './spreadsheet-xml.ts';

/**
 * Tables a reader can cite — a CSV or TSV file, a spreadsheet's sheets: blocks of rows, each under
 * the header row (the table's first row), so a quoted row always carries its column names. Each
 * block is one paragraph (one passage) of about `BLOCK_CHARS` characters, headed by the rows it
 * holds: a CSV file's data rows counted from 1, a sheet's rows by the numbers the spreadsheet shows.
 */
const BLOCK_CHARS = 800;

/** A cell as a Markdown table cell: one line, its pipes escaped. */
function cell(value: unknown): string {
  return String(value ?? '')
    .replace(/\s+/g, ' ')
    .replace(/\|/g, '\\|')
    .trim();
}

type Row = { number: number; cells: readonly unknown[] };

/** A table's blocks, under headings one level below `level` ('#': the document's title). */
function tableBlocks(rows: readonly Row[], level: string): string[] {
  const [header, ...body] = rows;
  if (!header) return [];
  const width = Math.max(...rows.map((row) => row.cells.length));
  const line = (row: readonly unknown[]) =>
    `| ${Array.from({ length: width }, (_, index) => cell(row[index])).join(' | ')} |`;
  const head = `${line(header.cells)}\n|${' --- |'.repeat(width)}`;
  const out: string[] = [];
  let block: Row[] = [];
  const flush = () => {
    if (block.length === 0) return;
    const first = block[0]!.number;
    const last = block.at(-1)!.number;
    out.push(
      `${level}# ${first === last ? `Row ${first}` : `Rows ${first}–${last}`}`,
      `${head}\n${block.map((row) => line(row.cells)).join('\n')}`,
    );
    block = [];
  };
  let chars = head.length;
  for (const row of body) {
    block.push(row);
    chars += line(row.cells).length + 1;
    if (chars >= BLOCK_CHARS) {
      flush();
      chars = head.length;
    }
  }
  flush();
  return out;
}

/** A CSV (or, with `delimiter` a tab, TSV) file as one table. */
export async function extractTable(
  text: string,
  fallbackTitle: string,
  delimiter?: string,
): Promise<ExtractedDocument> {
  const { default: Papa } = await import('papaparse');
  const parsed = Papa.parse<string[]>(text.replace(/^\uFEFF/, ''), { skipEmptyLines: 'greedy', delimiter });
  const rows = parsed.data.filter((row) => row.some((value) => String(value).trim()));
  if (rows.length === 0) throw new Error('an empty table (no header row)');
  const numbered = rows.map((cells, index) => ({ number: index, cells }));
  const out = [`# ${fallbackTitle}`, ...tableBlocks(numbered, '#')];
  return { title: fallbackTitle, text: out.join('\n\n'), linkRanges: [], kind: 'csv' };
}

/** A workbook's sheets, each a section under its name, its rows in blocks under its header row. */
export function sheetsDocument(
  sheets: readonly Sheet[],
  title: string,
  kind: Extract<DocumentKind, 'xlsx' | 'ods'>,
): ExtractedDocument {
  const filled = sheets.filter((sheet) => sheet.rows.length > 0);
  if (filled.length === 0) throw new Error('an empty spreadsheet (no sheet has a filled cell)');
  const out = [`# ${title}`];
  for (const sheet of filled) out.push(`## ${cell(sheet.name) || 'Sheet'}`, ...tableBlocks(sheet.rows, '##'));
  return { title, text: out.join('\n\n'), linkRanges: [], kind };
}
