/**
 * Spreadsheets (`.xlsx`, `.ods`) as their sheets' rows, read from the archive's XML with a streaming
 * parser (a large sheet is never held as a tree) and without its DTD, so no entity expands. Each row
 * keeps the number a spreadsheet shows it under, so a cited row can be found; cells are the values
 * as stored (a formula's last result, a date as a date), not the formula.
 */

/** A sheet: its name and its non-empty rows, each with the row number the spreadsheet shows. */
export interface Sheet {
  name: string;
  rows: { number: number; cells: string[] }[];
}

/** More columns than a table a reader reads; repeated empty cells past them are style, not data. */
const MAX_COLUMNS = 256;
/** Rows kept per sheet (a sheet of a million rows is data for a database, not passages). */
const MAX_ROWS = 100_000;

type Handlers = {
  open(name: string, attributes: Record<string, string>): void;
  text?(text: string): void;
  close?(name: string): void;
};

async function parseXml(xml: string, handlers: Handlers): Promise<void> {
  const { Parser } = await import('htmlparser2');
  const parser = new Parser(
    {
      onopentag: (name, attributes) => handlers.open(name, attributes),
      ontext: (text) => handlers.text?.(text),
      onclosetag: (name) => handlers.close?.(name),
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.end(xml);
}

/** `A` → 0, `Z` → 25, `AA` → 26: the column of a cell reference such as `AB12`. */
function columnIndex(reference: string): number {
  let index = 0;
  for (const letter of /^[A-Z]+/i.exec(reference)?.[0]?.toUpperCase() ?? '')
    index = index * 26 + letter.charCodeAt(0) - 64;
  return index - 1;
}

/** Built-in number formats that are dates or times (ECMA-376, 18.8.30). */
const BUILT_IN_DATE_FORMATS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47]);

/** A serial day number as the date it stands for (1900 system, with Excel's phantom 29 Feb 1900; or 1904). */
function serialDate(serial: number, date1904: boolean): string {
  // Serials 0–60 count from 31 Dec 1899 (Excel's 1900 has a 29 February); later ones, and the
  // negative serials some writers give earlier dates, from 30 Dec 1899.
  const days = date1904 ? serial + 1462 : serial >= 0 && serial < 61 ? serial + 1 : serial;
  const ms = Math.round((days - 25569) * 86_400_000);
  const iso = new Date(ms).toISOString();
  return serial % 1 === 0 ? iso.slice(0, 10) : iso.slice(0, 19).replace('T', ' ');
}

/** Which cell styles (`s` attribute: an index into `cellXfs`) show a number as a date. */
async function dateStyles(stylesXml: string): Promise<Set<number>> {
  const custom = new Map<number, string>();
  const formats: number[] = [];
  let inCellXfs = false;
  await parseXml(stylesXml, {
    open(name, attributes) {
      if (name === 'numFmt') custom.set(Number(attributes.numFmtId), attributes.formatCode ?? '');
      else if (name === 'cellXfs') inCellXfs = true;
      else if (name === 'xf' && inCellXfs) formats.push(Number(attributes.numFmtId ?? 0));
    },
    close(name) {
      if (name === 'cellXfs') inCellXfs = false;
    },
  });
  const isDate = (id: number) => {
    if (BUILT_IN_DATE_FORMATS.has(id)) return true;
    // A custom format with a day, month or year in it, once quoted text and colors are left out.
    const code = custom.get(id)?.replace(/"[^"]*"|\[[^\]]*\]|\\./g, '');
    return code !== undefined && /[dmy]/i.test(code);
  };
  return new Set(formats.flatMap((id, index) => (isDate(id) ? [index] : [])));
}

/** The shared strings of a workbook, in order (rich text runs joined; phonetic guides left out). */
async function sharedStrings(xml: string): Promise<string[]> {
  const strings: string[] = [];
  let current: string[] | null = null;
  let inText = false;
  let phonetic = 0;
  await parseXml(xml, {
    open(name) {
      if (name === 'si') current = [];
      else if (name === 'rPh') phonetic++;
      else if (name === 't') inText = true;
    },
    text(text) {
      if (inText && phonetic === 0) current?.push(text);
    },
    close(name) {
      if (name === 'si') strings.push((current ?? []).join(''));
      else if (name === 'rPh') phonetic--;
      else if (name === 't') inText = false;
    },
  });
  return strings;
}

/** One worksheet's rows. */
async function worksheetRows(
  xml: string,
  strings: string[],
  dates: Set<number>,
  date1904: boolean,
): Promise<Sheet['rows']> {
  const rows: Sheet['rows'] = [];
  let row: { number: number; cells: string[] } | null = null;
  let cell: { column: number; type: string; style: number; value: string[]; formula: string[] } | null = null;
  let inValue = false;
  let inFormula = false;
  let nextRow = 1;
  let nextColumn = 0;
  await parseXml(xml, {
    open(name, attributes) {
      if (name === 'row') {
        const number = attributes.r ? Number(attributes.r) : nextRow;
        row = { number, cells: [] };
        nextRow = number + 1;
        nextColumn = 0;
      } else if (name === 'c' && row) {
        const column = attributes.r ? columnIndex(attributes.r) : nextColumn;
        nextColumn = column + 1;
        cell = { column, type: attributes.t ?? 'n', style: Number(attributes.s ?? 0), value: [], formula: [] };
      } else if ((name === 'v' || name === 't') && cell) inValue = true;
      else if (name === 'f' && cell) inFormula = true;
    },
    text(text) {
      if (inValue) cell?.value.push(text);
      else if (inFormula) cell?.formula.push(text);
    },
    close(name) {
      if (name === 'v' || name === 't') inValue = false;
      else if (name === 'f') inFormula = false;
      else if (name === 'c' && cell && row) {
        const raw = cell.value.join('');
        // A formula its writer never calculated (no cached value) is shown as the formula.
        let shown = raw === '' && cell.formula.length ? `=${cell.formula.join('')}` : raw;
        if (cell.type === 's') shown = strings[Number(raw)] ?? '';
        else if (cell.type === 'b') shown = raw === '1' ? 'TRUE' : raw === '0' ? 'FALSE' : raw;
        else if (cell.type === 'n' && raw !== '' && dates.has(cell.style) && Number.isFinite(Number(raw)))
          shown = serialDate(Number(raw), date1904);
        if (shown.trim() && cell.column < MAX_COLUMNS) row.cells[cell.column] = shown;
        cell = null;
      } else if (name === 'row' && row) {
        if (row.cells.some((value) => value?.trim()) && rows.length < MAX_ROWS)
          rows.push({ number: row.number, cells: Array.from(row.cells, (value) => value ?? '') });
        row = null;
      }
    },
  });
  return rows;
}

/** A `.xlsx` workbook's sheets in the workbook's order, from its unpacked parts. */
export async function xlsxSheets(part: (name: string) => string): Promise<Sheet[]> {
  const workbook = part('xl/workbook.xml');
  if (!workbook) throw new Error('not an Excel workbook (no xl/workbook.xml)');
  const targets = new Map<string, string>();
  await parseXml(part('xl/_rels/workbook.xml.rels'), {
    open(name, attributes) {
      if (name === 'Relationship' && attributes.Id && attributes.Target)
        targets.set(attributes.Id, attributes.Target.replace(/^\/?(xl\/)?/, 'xl/'));
    },
  });
  const listed: { name: string; path: string }[] = [];
  let date1904 = false;
  await parseXml(workbook, {
    open(name, attributes) {
      if (name === 'workbookPr') date1904 = attributes.date1904 === '1' || attributes.date1904 === 'true';
      if (name !== 'sheet') return;
      const path = targets.get(attributes['r:id'] ?? '');
      // Chart sheets and dialog sheets hold no cells: only worksheets are read.
      if (path && /worksheets\//.test(path) && attributes.state !== 'veryHidden')
        listed.push({ name: attributes.name ?? path, path });
    },
  });
  const [strings, dates] = await Promise.all([
    sharedStrings(part('xl/sharedStrings.xml')),
    dateStyles(part('xl/styles.xml')),
  ]);
  const sheets: Sheet[] = [];
  for (const sheet of listed)
    sheets.push({ name: sheet.name, rows: await worksheetRows(part(sheet.path), strings, dates, date1904) });
  return sheets;
}

function withoutTrailingEmpty(cells: string[]): string[] {
  let end = cells.length;
  while (end > 0 && !cells[end - 1]!.trim()) end--;
  return cells.slice(0, end);
}

/** An OpenDocument spreadsheet's (`.ods`) sheets, from its `content.xml`. */
export async function odsSheets(contentXml: string): Promise<Sheet[]> {
  const sheets: Sheet[] = [];
  let sheet: Sheet | null = null;
  let rowNumber = 0;
  let row: { repeat: number; cells: string[] } | null = null;
  let cell: { repeat: number; paragraphs: string[] } | null = null;
  let paragraph: string[] | null = null;
  let notes = 0;
  await parseXml(contentXml, {
    open(name, attributes) {
      if (name === 'table:table') {
        sheet = { name: attributes['table:name'] ?? `Sheet ${sheets.length + 1}`, rows: [] };
        rowNumber = 0;
      } else if (name === 'table:table-row' && sheet) {
        row = { repeat: Math.max(1, Number(attributes['table:number-rows-repeated'] ?? 1) || 1), cells: [] };
      } else if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && row) {
        cell = { repeat: Math.max(1, Number(attributes['table:number-columns-repeated'] ?? 1) || 1), paragraphs: [] };
      } else if (name === 'text:p' && cell) paragraph = [];
      else if (name === 'office:annotation') notes++;
      else if (name === 'text:s' && paragraph) paragraph.push(' '.repeat(Number(attributes['text:c'] ?? 1) || 1));
      else if (name === 'text:tab' && paragraph) paragraph.push(' ');
    },
    text(text) {
      if (paragraph && notes === 0) paragraph.push(text);
    },
    close(name) {
      if (name === 'office:annotation') notes--;
      else if (name === 'text:p' && cell && paragraph && notes === 0) {
        cell.paragraphs.push(paragraph.join(''));
        paragraph = null;
      } else if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && cell && row) {
        const value = cell.paragraphs.join(' ');
        for (let index = 0; index < cell.repeat && row.cells.length < MAX_COLUMNS; index++) row.cells.push(value);
        cell = null;
      } else if (name === 'table:table-row' && row && sheet) {
        const first = rowNumber + 1;
        rowNumber += row.repeat;
        // Empty cells repeated to the sheet's edge (an office suite's styling) are no columns.
        const cells = withoutTrailingEmpty(row.cells);
        if (cells.length > 0) {
          const copies = Math.min(row.repeat, MAX_ROWS - sheet.rows.length);
          for (let index = 0; index < copies; index++) sheet.rows.push({ number: first + index, cells });
        }
        row = null;
      } else if (name === 'table:table' && sheet) {
        sheets.push(sheet);
        sheet = null;
      }
    },
  });
  return sheets;
}
