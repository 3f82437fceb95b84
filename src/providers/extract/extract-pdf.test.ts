import { describe, expect, it } from 'vitest';
import { pagedPdf } from '../../../test/support/minimal-pdf.ts';
import { chunkText } from '../search/local-corpus/chunk-text.ts';
import { extractDocument } from './extract-document.ts';

describe('PDF pages (issue 47)', () => {
  it('puts each page under its number, so a passage is cited at the page a reader opens', async () => {
    const bytes = pagedPdf('Tide tables', [
      ['High water at Brest comes later each day.'],
      ['Neap tides come at the quarter moons.'],
    ]);
    const document = await extractDocument(new Uint8Array(bytes), 'pdf', 'tides.pdf');
    expect(document.title).toBe('Tide tables');
    const passage = chunkText(document.text).find((each) => each.text.includes('Neap tides'));
    expect(passage?.headings).toBe('Page 2');
    expect(passage?.text).not.toContain('High water');
    // One page: no page heading to say.
    const single = await extractDocument(new Uint8Array(pagedPdf('One', [['Only this.']])), 'pdf', 'one.pdf');
    expect(single.text).not.toContain('## Page');
  });
});
