import { strToU8, zipSync } from 'fflate';

/**
 * Small Word and EPUB files written here from their parts, as the formats define them (OOXML's
 * WordprocessingML, EPUB 3's container, package and XHTML), so the tests' fixtures have their source.
 */
export function docxFile(options: {
  title: string;
  heading: string;
  paragraphs: string[];
  items?: string[];
}): Uint8Array {
  const w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  const paragraph = (text: string, properties = '') =>
    `<w:p>${properties ? `<w:pPr>${properties}</w:pPr>` : ''}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
  const body = [
    paragraph(options.heading, '<w:pStyle w:val="Heading1"/>'),
    ...options.paragraphs.map((text) => paragraph(text)),
    // A bulleted list item: numbering 1, level 0 (numbering.xml says its format is a bullet).
    ...(options.items ?? []).map((text) =>
      paragraph(text, '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>'),
    ),
  ].join('');
  return zipSync({
    '[Content_Types].xml': strToU8(
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>',
    ),
    '_rels/.rels': strToU8(
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/></Relationships>',
    ),
    'word/_rels/document.xml.rels': strToU8(
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/></Relationships>',
    ),
    'word/styles.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><w:styles ${w}><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>`,
    ),
    'word/numbering.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><w:numbering ${w}><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="•"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>`,
    ),
    'word/document.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><w:document ${w}><w:body>${body}</w:body></w:document>`,
    ),
    'docProps/core.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>${options.title}</dc:title></cp:coreProperties>`,
    ),
  });
}

export function epubFile(options: { title: string; chapters: { title: string; paragraphs: string[] }[] }): Uint8Array {
  const chapters = Object.fromEntries(
    options.chapters.map((chapter, index) => [
      `OEBPS/text/chapter-${index + 1}.xhtml`,
      strToU8(
        `<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>${chapter.title}</title></head><body><h1>${chapter.title}</h1>${chapter.paragraphs.map((text) => `<p>${text}</p>`).join('')}</body></html>`,
      ),
    ]),
  );
  const manifest = options.chapters
    .map(
      (_, index) =>
        `<item id="c${index + 1}" href="text/chapter-${index + 1}.xhtml" media-type="application/xhtml+xml"/>`,
    )
    .join('');
  const spine = options.chapters.map((_, index) => `<itemref idref="c${index + 1}"/>`).join('');
  return zipSync({
    mimetype: [strToU8('application/epub+zip'), { level: 0 }],
    'META-INF/container.xml': strToU8(
      '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    ),
    'OEBPS/content.opf': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">quarry-test</dc:identifier><dc:title>${options.title}</dc:title></metadata><manifest>${manifest}</manifest><spine>${spine}</spine></package>`,
    ),
    ...chapters,
  });
}

/** A zip whose one entry unpacks to `megabytes` of zeros: what a zip bomb looks like. */
export function zipBomb(megabytes = 20): Uint8Array {
  return zipSync({ 'word/document.xml': new Uint8Array(megabytes * 1024 * 1024) });
}

/** An OpenDocument text (`.odt`) or presentation (`.odp`): `content.xml` and `meta.xml`, stored as ODF says. */
export function openDocumentFile(options: {
  kind: 'odt' | 'odp';
  title: string;
  heading: string;
  paragraphs: string[];
  items?: string[];
}): Uint8Array {
  const ns =
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"';
  const paragraphs = options.paragraphs.map((text) => `<text:p>${text}</text:p>`).join('');
  const list = options.items?.length
    ? `<text:list>${options.items.map((text) => `<text:list-item><text:p>${text}</text:p></text:list-item>`).join('')}</text:list>`
    : '';
  const body =
    options.kind === 'odt'
      ? `<office:text><text:h text:outline-level="1">${options.heading}</text:h>${paragraphs}${list}</office:text>`
      : `<office:presentation><draw:page draw:name="${options.heading}"><draw:frame><draw:text-box>${paragraphs}${list}</draw:text-box></draw:frame></draw:page></office:presentation>`;
  return zipSync({
    mimetype: [
      strToU8(`application/vnd.oasis.opendocument.${options.kind === 'odt' ? 'text' : 'presentation'}`),
      { level: 0 },
    ],
    'content.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${ns}><office:body>${body}</office:body></office:document-content>`,
    ),
    'meta.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>${options.title}</dc:title></office:meta></office:document-meta>`,
    ),
  });
}

/** A PowerPoint presentation (`.pptx`): one slide per entry, each its paragraphs. */
export function pptxFile(options: { title: string; slides: string[][] }): Uint8Array {
  const a =
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"';
  const slides = Object.fromEntries(
    options.slides.map((paragraphs, index) => [
      `ppt/slides/slide${index + 1}.xml`,
      strToU8(
        `<?xml version="1.0" encoding="UTF-8"?><p:sld ${a}><p:cSld><p:spTree><p:sp><p:txBody>${paragraphs.map((text) => `<a:p><a:r><a:t>${text}</a:t></a:r></a:p>`).join('')}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>`,
      ),
    ]),
  );
  return zipSync({
    'docProps/core.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>${options.title}</dc:title></cp:coreProperties>`,
    ),
    ...slides,
  });
}
