import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, expect, it } from 'vitest';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { docxFile, epubFile, openDocumentFile, pptxFile, zipBomb } from '../support/office-files.ts';

const bin = join(fileURLToPath(new URL('../../', import.meta.url)), 'bin', 'quarry');
const home = mkdtempSync(join(tmpdir(), 'quarry-office-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

it('researches Word, EPUB, OpenDocument, PowerPoint, CSV, spreadsheet, reST and man page files, citing them, while a zip bomb beside them is refused with its reason (issue 47)', {
  timeout: within(60_000),
}, () => {
  const docs = join(home, 'docs');
  mkdirSync(docs);
  writeFileSync(
    join(docs, 'tides.docx'),
    docxFile({
      title: 'Tide tables',
      heading: 'Reading a tide table',
      paragraphs: [
        'High water at Brest comes about fifty minutes later each day, because the moon rises later each day.',
      ],
    }),
  );
  writeFileSync(
    join(docs, 'sea.epub'),
    epubFile({
      title: 'The Sea and its Tides',
      chapters: [
        { title: 'Neap tides', paragraphs: ['Neap tides come when the sun and the moon pull at right angles.'] },
      ],
    }),
  );
  writeFileSync(
    join(docs, 'harbour.odt'),
    openDocumentFile({
      kind: 'odt',
      title: 'Harbour notes',
      heading: 'Mooring at low water',
      paragraphs: ['Leave slack in the mooring lines: the boat drops with the ebbing tide.'],
    }),
  );
  writeFileSync(join(docs, 'power.pptx'), pptxFile({ title: 'Tidal power', slides: [['Barrages hold water back.']] }));
  writeFileSync(
    join(docs, 'ports.csv'),
    'port,country,tide type,mean range (m)\nBrest,France,semi-diurnal,4.5\nBay of Fundy,Canada,semi-diurnal,11.7\n',
  );
  // Spreadsheets as their own writers make them (test/fixtures/sheets/make-sheets.py).
  for (const name of ['tide-gauges.xlsx', 'harbour-depths.ods'])
    copyFileSync(fileURLToPath(new URL(`../fixtures/sheets/${name}`, import.meta.url)), join(docs, name));
  writeFileSync(
    join(docs, 'gauges.rst'),
    'Tide Gauges\n===========\n\nCalibrating\n-----------\n\nCalibrate the gauge against chart datum once a year.\n',
  );
  writeFileSync(
    join(docs, 'tidecalc.1.gz'),
    gzipSync(
      '.TH TIDECALC 1\n.SH NAME\ntidecalc \\- predict the tide\n.SH OPTIONS\n.TP\n.BR \\-d ", " \\-\\-days =\\fIN\\fR\npredict N days ahead, at most 366\n',
    ),
  );
  writeFileSync(join(docs, 'bomb.docx'), zipBomb());
  const quarry = (args: string[]) =>
    spawnSync(process.execPath, [bin, ...args], {
      env: childEnv({ QUARRY_HOME: home }),
      encoding: 'utf8',
      timeout: within(30_000),
    });

  const indexed = quarry(['index', docs]);
  expect(indexed.status, indexed.stderr).toBe(0);
  expect(indexed.stdout + indexed.stderr).toContain('9 added');
  expect(indexed.stdout + indexed.stderr).toMatch(/skipped .*bomb\.docx: .*zip bomb/);

  const word = quarry(['run', 'Why does high water come later each day at Brest?', '--docs', docs]);
  expect(word.status, word.stderr).toBe(0);
  expect(word.stdout).toContain('> High water at Brest comes about fifty minutes later each day');
  expect(word.stdout).toMatch(/1\. Tide tables — <.*tides\.docx>/);
  const book = quarry(['run', 'When do neap tides come?', '--docs', docs]);
  expect(book.status, book.stderr).toBe(0);
  expect(book.stdout).toContain('> Neap tides come when the sun and the moon pull at right angles.');
  expect(book.stdout).toMatch(/The Sea and its Tides — <.*sea\.epub>/);
  const notes = quarry(['run', 'Why leave slack in the mooring lines?', '--docs', docs]);
  expect(notes.stdout).toContain('> Leave slack in the mooring lines: the boat drops with the ebbing tide.');
  expect(notes.stdout).toMatch(/Harbour notes — <.*harbour\.odt>/);
  // A sheet's row is quoted under its header row.
  const sheet = quarry(['run', 'What is the mean tide range at the Bay of Fundy?', '--docs', docs]);
  expect(sheet.stdout).toContain('> | port | country | tide type | mean range (m) |');
  expect(sheet.stdout).toContain('> | Bay of Fundy | Canada | semi-diurnal | 11.7 |');
  // A workbook's row, under its header row, cited by the workbook's title.
  const workbook = quarry(['run', 'How deep is the harbour at Granville at low water?', '--docs', docs]);
  expect(workbook.status, workbook.stderr).toBe(0);
  expect(workbook.stdout).toContain('> | harbour | depth at low water (m) | note |');
  expect(workbook.stdout).toContain('> | Granville | 1.4 | lock gate opens two hours either side of high water |');
  expect(workbook.stdout).toMatch(/Harbour depths — <.*harbour-depths\.ods>/);
  // A man page's option, under its section; a reST section under its title.
  const man = quarry(['run', 'How many days ahead can tidecalc predict?', '--docs', docs]);
  expect(man.stdout).toContain('> predict N days ahead, at most 366');
  expect(man.stdout).toMatch(/TIDECALC\(1\) — <.*tidecalc\.1\.gz>/);
  const rst = quarry(['run', 'How often should the gauge be calibrated against chart datum?', '--docs', docs]);
  expect(rst.stdout).toContain('> Calibrate the gauge against chart datum once a year.');
  const gauges = quarry(['run', 'When did the tide gauge at Brest open?', '--docs', docs]);
  expect(gauges.stdout).toContain('> | Brest | France | 1846-01-01 | 4.5 | TRUE | =D2*3.281 |');
  expect(gauges.stdout).toMatch(/Tide gauges — <.*tide-gauges\.xlsx>/);
});
