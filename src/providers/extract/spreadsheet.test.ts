import { readFileSync } from 'node:fs';
import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { chunkText } from '../search/local-corpus/chunk-text.ts';
import { extractDocument } from './extract-document.ts';
import { kindFromPath } from './extracted-document.ts';

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/sheets/${name}`, import.meta.url));

/** The table passages of a document: each one's heading path and its table lines. */
function tables(text: string) {
  return chunkText(text)
    .filter((passage) => passage.text.includes('|'))
    .map((passage) => ({
      headings: passage.headings.split(' › '),
      lines: passage.text.slice(passage.text.indexOf('|')).split('\n'),
    }));
}

/** A workbook from its parts, as Excel writes them: shared strings, styles, relationships. */
function workbook(options: { sheetXml: string; sharedStrings?: string; styles?: string; date1904?: boolean }) {
  const main = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
  const rel = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
  return zipSync({
    'xl/workbook.xml': strToU8(
      `<?xml version="1.0"?><workbook ${main} ${rel}><workbookPr${options.date1904 ? ' date1904="1"' : ''}/><sheets><sheet name="Chart" sheetId="2" r:id="rId2"/><sheet name="Readings &amp; notes" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ),
    'xl/_rels/workbook.xml.rels': strToU8(
      '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="chartsheet" Target="chartsheets/sheet1.xml"/></Relationships>',
    ),
    'xl/worksheets/sheet1.xml': strToU8(
      `<?xml version="1.0"?><worksheet ${main}><sheetData>${options.sheetXml}</sheetData></worksheet>`,
    ),
    'xl/chartsheets/sheet1.xml': strToU8(`<?xml version="1.0"?><chartsheet ${main}/>`),
    ...(options.sharedStrings
      ? { 'xl/sharedStrings.xml': strToU8(`<?xml version="1.0"?><sst ${main}>${options.sharedStrings}</sst>`) }
      : {}),
    ...(options.styles
      ? { 'xl/styles.xml': strToU8(`<?xml version="1.0"?><styleSheet ${main}>${options.styles}</styleSheet>`) }
      : {}),
  });
}

describe('spreadsheets as tables (issue 47)', () => {
  it('reads an .xlsx written by openpyxl: each sheet a section, every block under its header row', async () => {
    expect(kindFromPath('/docs/Gauges.XLSX')).toBe('xlsx');
    const document = await extractDocument(fixture('tide-gauges.xlsx'), 'xlsx', 'tide-gauges.xlsx');
    expect(document).toMatchObject({ title: 'Tide gauges', kind: 'xlsx' });
    const found = tables(document.text);
    expect(found.map((table) => table.headings)).toEqual([
      ['Tide gauges', 'Gauges', 'Rows 2–6'],
      ['Tide gauges', 'Notes', 'Rows 2–3'],
    ]);
    expect(found[0]!.lines).toEqual([
      '| station | country | opened | mean range (m) | tidal | range (ft) |',
      '| --- | --- | --- | --- | --- | --- |',
      // Dates as dates (before 1900 too), booleans as a spreadsheet shows them, an uncalculated formula as itself.
      '| Brest | France | 1846-01-01 | 4.5 | TRUE | =D2*3.281 |',
      '| Bay of Fundy \\| Burntcoat Head | Canada | 1965-06-01 | 11.7 | TRUE | =D3*3.281 |',
      '| Lake Geneva | Switzerland | 1900-03-01 | 0 | FALSE | =D4*3.281 |',
      // Row 5 is empty: row 6 keeps its own number.
      '| Venice | Italy | 1872-01-01 | 0.6 | TRUE |  |',
    ]);
  });

  it('reads an .ods written by odfpy: repeated rows counted, cells repeated to the edge ignored', async () => {
    expect(kindFromPath('/docs/depths.ods')).toBe('ods');
    const document = await extractDocument(fixture('harbour-depths.ods'), 'ods', 'harbour-depths.ods');
    expect(document).toMatchObject({ title: 'Harbour depths', kind: 'ods' });
    const [table] = tables(document.text);
    expect(table!.headings).toEqual(['Harbour depths', 'Depths', 'Rows 2–100004']);
    expect(table!.lines[0]).toBe('| harbour | depth at low water (m) | note |');
    expect(table!.lines.at(-1)).toBe('| Cherbourg | 9.0 | deep-water harbour, open at all states of the tide |');
  });

  it('reads shared strings, date styles, the 1904 date system and cached formula results as Excel writes them', async () => {
    const bytes = workbook({
      sharedStrings:
        '<si><t>port</t></si><si><t>measured</t></si><si><r><t>Saint</t></r><r><rPr><b/></rPr><t>-Malo</t></r><rPh><t>ignored guide</t></rPh></si>',
      styles:
        '<numFmts count="1"><numFmt numFmtId="164" formatCode="[$-409]d &quot;de&quot; mmmm yyyy"/></numFmts><cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="164"/></cellXfs>',
      date1904: true,
      sheetXml:
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="inlineStr"><is><t>range</t></is></c></row>' +
        '<row r="3"><c r="A3" t="s"><v>2</v></c><c r="B3" s="2"><v>0</v></c><c r="C3"><f>1+2</f><v>3</v></c><c r="E3" t="e"><v>#N/A</v></c></row>',
    });
    const document = await extractDocument(bytes, 'xlsx', 'ports.xlsx');
    const [table] = tables(document.text);
    // The chart sheet has no cells: only the worksheet is read, under its name.
    expect(table!.headings).toEqual(['ports', 'Readings & notes', 'Row 3']);
    expect(table!.lines).toEqual([
      '| port | measured | range |  |  |',
      '| --- | --- | --- | --- | --- |',
      '| Saint-Malo | 1904-01-01 | 3 |  | #N/A |',
    ]);
  });

  it('cuts a long sheet into blocks of about 800 characters, each under the header row', async () => {
    const rows = Array.from(
      { length: 200 },
      (_, index) =>
        `<row r="${index + 2}"><c t="inlineStr"><is><t>Station ${index + 1}</t></is></c><c><v>${index * 0.5}</v></c></row>`,
    );
    const bytes = workbook({
      sheetXml: `<row r="1"><c t="inlineStr"><is><t>station</t></is></c><c t="inlineStr"><is><t>range (m)</t></is></c></row>${rows.join('')}`,
    });
    const found = tables((await extractDocument(bytes, 'xlsx', 'stations.xlsx')).text);
    expect(found.length).toBeGreaterThan(5);
    for (const table of found) {
      expect(table.lines[0]).toBe('| station | range (m) |');
      expect(table.lines.join('\n').length).toBeLessThan(1200);
    }
    expect(found.flatMap((table) => table.lines.slice(2))).toHaveLength(200);
    expect(found[1]!.headings.at(-1)).toMatch(/^Rows \d+–\d+$/);
  });

  it('refuses an empty spreadsheet, a file that is no workbook, and expands no entity', async () => {
    await expect(extractDocument(workbook({ sheetXml: '' }), 'xlsx', 'empty.xlsx')).rejects.toThrow(
      /empty spreadsheet/,
    );
    await expect(extractDocument(zipSync({ 'a.txt': strToU8('x') }), 'xlsx', 'not.xlsx')).rejects.toThrow(
      /not an Excel workbook/,
    );
    await expect(extractDocument(strToU8('plain text'), 'ods', 'not.ods')).rejects.toThrow(/not a readable zip/);
    // A billion laughs: the DTD is not read, so &lol9; stays as it is written.
    const laughs = `<!DOCTYPE s [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, level) => `<!ENTITY lol${level + 1} "${`&lol${level || ''};`.repeat(10)}">`).join('')}]>`;
    const bomb = zipSync({
      'content.xml': strToU8(
        `<?xml version="1.0"?>${laughs}<office:document-content xmlns:office="o" xmlns:table="t" xmlns:text="x"><office:body><office:spreadsheet><table:table table:name="S"><table:table-row><table:table-cell><text:p>&lol9;</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>`,
      ),
    });
    const document = await extractDocument(bomb, 'ods', 'laughs.ods');
    expect(document.text.length).toBeLessThan(200);
    expect(document.text).not.toContain('lollol');
  });
});
