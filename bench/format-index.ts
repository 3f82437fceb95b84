/**
 * Indexing each document format Quarry reads, beside the raw library's own parse of the same files:
 * what Quarry's whole path costs (unpacking with its caps, extraction to structure, chunking into
 * passages, storing them with their full-text index) against the parse alone (mammoth's conversion,
 * unzipping and parsing the XML, papaparse, htmlparser2, unpdf). Then a mixed folder of about
 * `--mb` megabytes (default 200) indexed while the process's resident memory is sampled, to show
 * that memory follows the batch in hand, not the folder.
 * Files are generated (seeded, so every run measures the same bytes): prose-like words in each
 * format's own structure, written as the formats define them (test/support/office-files.ts).
 * Run alone: `node --import tsx bench/format-index.ts [--mb 200]`.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { indexFolders } from '../src/providers/search/local-corpus/index-folders.ts';
import { openStore } from '../src/store/open-store.ts';
import { pagedPdf } from '../test/support/minimal-pdf.ts';
import { docxFile, epubFile, openDocumentFile, pptxFile } from '../test/support/office-files.ts';
import { formatBytes, pageText, printTable, seededRandom, tempFolder, timeMs } from './bench-lib.ts';

const random = seededRandom(47);
const sentence = () => `${pageText(random, 160)}.`;
const paragraphs = (count: number) => Array.from({ length: count }, sentence);

/** An .xlsx of `rows` rows under a header, with shared strings, as Excel writes one. */
function xlsxFile(rows: number): Uint8Array {
  const main = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
  const strings = ['station', 'region', 'reading', 'note'];
  const body = Array.from({ length: rows }, (_, index) => {
    strings.push(pageText(random, 60));
    return `<row r="${index + 2}"><c t="inlineStr"><is><t>Station ${index}</t></is></c><c t="inlineStr"><is><t>${pageText(random, 20)}</t></is></c><c><v>${(random() * 100).toFixed(2)}</v></c><c t="s"><v>${strings.length - 1}</v></c></row>`;
  }).join('');
  const header = '<row r="1">' + [0, 1, 2, 3].map((index) => `<c t="s"><v>${index}</v></c>`).join('') + '</row>';
  return zipSync({
    'xl/workbook.xml': strToU8(
      `<workbook ${main} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Readings" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ),
    'xl/_rels/workbook.xml.rels': strToU8(
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>',
    ),
    'xl/sharedStrings.xml': strToU8(`<sst ${main}>${strings.map((text) => `<si><t>${text}</t></si>`).join('')}</sst>`),
    'xl/worksheets/sheet1.xml': strToU8(`<worksheet ${main}><sheetData>${header}${body}</sheetData></worksheet>`),
  });
}

function manPage(sections: number): string {
  const out = ['.TH BENCH 1', '.SH NAME', 'bench \\- a generated page'];
  for (let section = 0; section < sections; section++) {
    out.push(`.SH SECTION ${section}`, ...paragraphs(3).flatMap((text) => ['.PP', text]));
    out.push('.TP', `.BR \\-\\-option${section}`, sentence());
  }
  return out.join('\n');
}

/** Each format: how to write one file of it (~40–80 KB of text), and the raw library's parse. */
const formats: {
  name: string;
  extension: string;
  make: (index: number) => Uint8Array | string;
  parse: (bytes: Uint8Array) => Promise<unknown>;
}[] = [
  {
    name: 'Markdown',
    extension: 'md',
    make: (index) =>
      `# Page ${index}\n\n${paragraphs(40)
        .map((text, at) => (at % 8 ? text : `## Part ${at}\n\n${text}`))
        .join('\n\n')}\n`,
    parse: async (bytes) => new TextDecoder().decode(bytes).split('\n\n'),
  },
  {
    name: 'HTML',
    extension: 'html',
    make: (index) =>
      `<!doctype html><html><head><title>Page ${index}</title></head><body><main><h1>Page ${index}</h1>${paragraphs(40)
        .map((text, at) => (at % 8 ? `<p>${text}</p>` : `<h2>Part ${at}</h2><p>${text}</p>`))
        .join('')}</main></body></html>`,
    parse: async (bytes) => (await import('htmlparser2')).parseDocument(new TextDecoder().decode(bytes)),
  },
  {
    name: 'PDF',
    extension: 'pdf',
    make: (index) =>
      pagedPdf(
        `Report ${index}`,
        Array.from({ length: 6 }, () => Array.from({ length: 30 }, () => pageText(random, 70))),
      ),
    parse: async (bytes) => (await import('unpdf')).extractText(new Uint8Array(bytes), { mergePages: false }),
  },
  {
    name: 'Word (.docx)',
    extension: 'docx',
    make: (index) =>
      docxFile({ title: `Memo ${index}`, heading: `Memo ${index}`, paragraphs: paragraphs(40), items: paragraphs(5) }),
    parse: async (bytes) => (await import('mammoth')).convertToHtml({ buffer: Buffer.from(bytes) }),
  },
  {
    name: 'EPUB',
    extension: 'epub',
    make: (index) =>
      epubFile({
        title: `Book ${index}`,
        chapters: Array.from({ length: 5 }, (_, chapter) => ({
          title: `Chapter ${chapter + 1}`,
          paragraphs: paragraphs(8),
        })),
      }),
    parse: async (bytes) => {
      const { parseDocument } = await import('htmlparser2');
      for (const [name, part] of Object.entries(unzipSync(bytes)))
        if (name.endsWith('.xhtml')) parseDocument(new TextDecoder().decode(part), { xmlMode: true });
    },
  },
  {
    name: 'OpenDocument (.odt)',
    extension: 'odt',
    make: (index) =>
      openDocumentFile({ kind: 'odt', title: `Notes ${index}`, heading: `Notes ${index}`, paragraphs: paragraphs(40) }),
    parse: async (bytes) =>
      (await import('htmlparser2')).parseDocument(new TextDecoder().decode(unzipSync(bytes)['content.xml']), {
        xmlMode: true,
      }),
  },
  {
    name: 'PowerPoint (.pptx)',
    extension: 'pptx',
    make: (index) => pptxFile({ title: `Deck ${index}`, slides: Array.from({ length: 20 }, () => paragraphs(2)) }),
    parse: async (bytes) => {
      const { parseDocument } = await import('htmlparser2');
      for (const [name, part] of Object.entries(unzipSync(bytes)))
        if (name.startsWith('ppt/slides/')) parseDocument(new TextDecoder().decode(part), { xmlMode: true });
    },
  },
  {
    name: 'Excel (.xlsx)',
    extension: 'xlsx',
    make: () => xlsxFile(500),
    parse: async (bytes) => {
      const { parseDocument } = await import('htmlparser2');
      for (const [name, part] of Object.entries(unzipSync(bytes)))
        if (name.endsWith('.xml')) parseDocument(new TextDecoder().decode(part), { xmlMode: true });
    },
  },
  {
    name: 'CSV',
    extension: 'csv',
    make: () =>
      `station,region,reading,note\n${Array.from({ length: 500 }, (_, row) => `Station ${row},${pageText(random, 20)},${(random() * 100).toFixed(2)},"${pageText(random, 60)}"`).join('\n')}\n`,
    parse: async (bytes) => (await import('papaparse')).default.parse(new TextDecoder().decode(bytes)),
  },
  {
    name: 'man page (.1.gz)',
    extension: '1.gz',
    make: () => gzipSync(manPage(12)),
    parse: async (bytes) => {
      const { gunzipSync } = await import('node:zlib');
      return new TextDecoder().decode(gunzipSync(bytes)).split('\n');
    },
  },
];

const FILES_PER_FORMAT = 100;

/** Peak resident memory while `work` runs, sampled every 25 ms. */
async function peakRss(work: () => Promise<unknown>): Promise<{ ms: number; peak: number; before: number }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 25);
  try {
    const ms = await timeMs(work);
    return { ms, peak: Math.max(peak, process.memoryUsage.rss()), before };
  } finally {
    clearInterval(timer);
  }
}

export async function run(): Promise<void> {
  const at = process.argv.indexOf('--mb');
  const mixedMb = at > 0 ? Number(process.argv[at + 1]) : 200;
  console.log(
    `\nFormat indexing inputs: ${FILES_PER_FORMAT} generated files per format (seeded), ${formats.length} formats; a mixed folder of ~${mixedMb} MB; SQLite; ${availableParallelism()} extraction threads.`,
  );
  const work = tempFolder('format-index');
  try {
    const rows: string[][] = [];
    for (const format of formats) {
      const folder = join(work.path, format.extension.replace('.', '-'));
      mkdirSync(folder);
      for (let index = 0; index < FILES_PER_FORMAT; index++)
        writeFileSync(join(folder, `file-${index}.${format.extension}`), format.make(index));
      const files = readdirSync(folder).map((name) => readFileSync(join(folder, name)));
      const bytes = files.reduce((sum, file) => sum + file.length, 0);
      const parseMs = await timeMs(async () => {
        for (const file of files) await format.parse(new Uint8Array(file));
      });
      const store = await openStore({ db: join(work.path, `${format.extension}.db`) });
      let passages = 0;
      let skipped = 0;
      const indexMs = await timeMs(async () => {
        const report = await indexFolders(store, [folder]);
        passages = report.passages;
        skipped = report.skipped.length;
      });
      await store.close();
      rows.push([
        format.name,
        `${FILES_PER_FORMAT - skipped} of ${FILES_PER_FORMAT}`,
        formatBytes(bytes),
        String(passages),
        `${(bytes / 2 ** 20 / (indexMs / 1000)).toFixed(1)} MB/s`,
        `${Math.round(passages / (indexMs / 1000))}/s`,
        `${(bytes / 2 ** 20 / (parseMs / 1000)).toFixed(1)} MB/s`,
        `${(indexMs / parseMs).toFixed(1)}×`,
      ]);
    }
    printTable(
      'Indexing each format (extract, chunk, store with full-text index; every core) beside the raw library parse of the same files (one thread)',
      ['format', 'indexed', 'bytes', 'passages', 'Quarry index', 'passages/s', 'raw parse', 'index ÷ parse'],
      rows,
    );

    // The mixed folder: the generated files copied round-robin until it holds ~mixedMb MB.
    const mixed = join(work.path, 'mixed');
    mkdirSync(mixed);
    const sources = formats.flatMap((format) => {
      const folder = join(work.path, format.extension.replace('.', '-'));
      return readdirSync(folder).map((name) => join(folder, name));
    });
    let total = 0;
    for (let copy = 0; total < mixedMb * 2 ** 20; copy++) {
      const source = sources[copy % sources.length]!;
      // Each copy a file of its own content (a line appended where the format allows) is not needed:
      // the index reads every file; identical bytes are still read, extracted and stored.
      const target = join(mixed, `${copy}-${source.split('/').at(-1)}`);
      copyFileSync(source, target);
      total += statSync(target).size;
    }
    const store = await openStore({ db: join(work.path, 'mixed.db') });
    let report!: Awaited<ReturnType<typeof indexFolders>>;
    const measured = await peakRss(async () => {
      report = await indexFolders(store, [mixed]);
    });
    await store.close();
    printTable(
      `A mixed folder of ${formatBytes(total)} (${readdirSync(mixed).length} files, every format above)`,
      ['indexed', 'passages', 'time', 'throughput', 'resident memory before', 'peak while indexing', 'growth'],
      [
        [
          `${report.added} (${report.skipped.length} skipped)`,
          String(report.passages),
          `${(measured.ms / 1000).toFixed(1)} s`,
          `${(total / 2 ** 20 / (measured.ms / 1000)).toFixed(1)} MB/s`,
          formatBytes(measured.before),
          formatBytes(measured.peak),
          formatBytes(measured.peak - measured.before),
        ],
      ],
    );
  } finally {
    work.remove();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
