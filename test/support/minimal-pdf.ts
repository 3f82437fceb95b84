/** A small valid PDF with a title and lines of Helvetica text, for extraction tests. */
export function minimalPdf(title: string, lines: string[]): Buffer {
  return pagedPdf(title, [lines]);
}

/** A valid PDF of several pages, each its lines of Helvetica text from the top, with a title. */
export function pagedPdf(title: string, pages: string[][]): Buffer {
  const escapePdf = (text: string) => text.replace(/[\\()]/g, (char) => `\\${char}`);
  // Objects: 1 catalog, 2 pages, 3 font, 4 info, then a page and its content for each page.
  const pageObject = (index: number) => 5 + index * 2;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${pages.map((_, index) => `${pageObject(index)} 0 R`).join(' ')}] /Count ${pages.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Title (${escapePdf(title)}) /Author (Quarry Tests) >>`,
  ];
  for (const [index, lines] of pages.entries()) {
    const content = `BT /F1 12 Tf 72 720 Td ${lines.map((line, at) => `${at ? '0 -16 Td ' : ''}(${escapePdf(line)}) Tj`).join(' ')} ET`;
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${pageObject(index) + 1} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`,
      `<< /Length ${Buffer.byteLength(content)} >>\nstream\n${content}\nendstream`,
    );
  }
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body));
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body);
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info 4 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
