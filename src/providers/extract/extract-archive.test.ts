import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { docxFile, epubFile, openDocumentFile, pptxFile, zipBomb } from '../../../test/support/office-files.ts';
import { extractDocument } from './extract-document.ts';
import { kindFromPath } from './extracted-document.ts';

describe('Word and EPUB files (issue 47)', () => {
  it('reads a Word file with its title, headings and lists', async () => {
    const bytes = docxFile({
      title: 'Tide tables',
      heading: 'Reading a tide table',
      paragraphs: ['High water at Brest comes about fifty minutes later each day.'],
      items: ['Find the port.', 'Read the time of high water.'],
    });
    expect(kindFromPath('/docs/Tides.DOCX')).toBe('docx');
    const document = await extractDocument(bytes, 'docx', 'tides.docx');
    expect(document.title).toBe('Tide tables');
    expect(document.kind).toBe('docx');
    expect(document.text).toContain('# Reading a tide table');
    expect(document.text).toContain('High water at Brest comes about fifty minutes later each day.');
    expect(document.text).toMatch(/^- Find the port\.$/m);
  });

  it('reads an EPUB book’s chapters in reading order, titled by the book', async () => {
    const bytes = epubFile({
      title: 'The Sea and its Tides',
      chapters: [
        { title: 'Neap tides', paragraphs: ['Neap tides come when the sun and moon pull at right angles.'] },
        { title: 'Spring tides', paragraphs: ['Spring tides come at new and full moon.'] },
      ],
    });
    const document = await extractDocument(bytes, 'epub', 'sea.epub');
    expect(document.title).toBe('The Sea and its Tides');
    const neap = document.text.indexOf('Neap tides come');
    expect(neap).toBeGreaterThan(0);
    expect(document.text.indexOf('Spring tides come')).toBeGreaterThan(neap);
  });

  it('reads OpenDocument text and presentations and PowerPoint slides, in order, titled by their properties', async () => {
    const odt = await extractDocument(
      openDocumentFile({
        kind: 'odt',
        title: 'Harbour notes',
        heading: 'Mooring at low water',
        paragraphs: ['Leave slack in the lines: the boat drops with the tide.'],
        items: ['Check the tide table.', 'Fender the hull.'],
      }),
      'odt',
      'harbour.odt',
    );
    expect(odt).toMatchObject({ title: 'Harbour notes', kind: 'odt' });
    expect(odt.text).toContain('# Mooring at low water');
    expect(odt.text).toContain('Leave slack in the lines: the boat drops with the tide.');
    expect(odt.text).toMatch(/^- Fender the hull\.$/m);
    const odp = await extractDocument(
      openDocumentFile({ kind: 'odp', title: 'Talk', heading: 'Why tides', paragraphs: ['The moon pulls the sea.'] }),
      'odp',
      'talk.odp',
    );
    expect(odp.text).toContain('## Why tides');
    expect(odp.text).toContain('The moon pulls the sea.');
    const pptx = await extractDocument(
      pptxFile({ title: 'Tidal power', slides: [['Barrages hold water back.'], ['Turbines turn as it flows out.']] }),
      'pptx',
      'power.pptx',
    );
    expect(pptx.title).toBe('Tidal power');
    expect(pptx.text.indexOf('## Slide 1')).toBeLessThan(pptx.text.indexOf('Barrages hold water back.'));
    expect(pptx.text.indexOf('## Slide 2')).toBeLessThan(pptx.text.indexOf('Turbines turn as it flows out.'));
    await expect(extractDocument(zipSync({ 'a.txt': strToU8('x') }), 'pptx', 'no.pptx')).rejects.toThrow(/no slides/);
  });

  it('refuses a zip bomb, a broken archive and an archive that is no document, saying why', async () => {
    await expect(extractDocument(zipBomb(), 'docx', 'bomb.docx')).rejects.toThrow(/zip bomb/);
    await expect(extractDocument(strToU8('PK not really a zip'), 'docx', 'broken.docx')).rejects.toThrow(
      /not a readable zip archive/,
    );
    // An encrypted Office file is an OLE compound file (its signature, then sectors): said so. (No writer
    // of encrypted files is packaged here; the signature is what every one of them begins with.)
    const compound = new Uint8Array(4096);
    compound.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
    for (const kind of ['docx', 'xlsx', 'pptx'] as const)
      await expect(extractDocument(compound, kind, `locked.${kind}`)).rejects.toThrow(
        /encrypted \(password-protected\)/,
      );
    await expect(extractDocument(zipSync({ 'a.txt': strToU8('hello') }), 'epub', 'empty.epub')).rejects.toThrow(
      /not an EPUB book/,
    );
    // An entity that would expand is never expanded: the XML is read without its DTD.
    const entities = epubFile({ title: 'Entities', chapters: [{ title: 'One', paragraphs: ['&lol9;'] }] });
    await expect(extractDocument(entities, 'epub', 'entities.epub')).resolves.toMatchObject({ title: 'Entities' });
  });
});
