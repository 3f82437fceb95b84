import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { chunkText } from '../search/local-corpus/chunk-text.ts';
import { extractDocument } from './extract-document.ts';
import { kindFromPath } from './extracted-document.ts';

const encode = (text: string) => new TextEncoder().encode(text);
const headingsOf = (text: string) => [...new Set(chunkText(text).map((passage) => passage.headings))];
const passageWith = (text: string, words: string) => chunkText(text).find((passage) => passage.text.includes(words));

describe('reStructuredText, AsciiDoc and man pages with their structure (issue 47)', () => {
  it('knows them by name', () => {
    expect(kindFromPath('/docs/guide.rst')).toBe('rst');
    expect(kindFromPath('/docs/guide.adoc')).toBe('asciidoc');
    expect(kindFromPath('/usr/share/man/man1/ls.1.gz')).toBe('man');
    expect(kindFromPath('/docs/printf.3p')).toBe('man');
    expect(kindFromPath('/docs/tar.1')).toBe('man');
    expect(kindFromPath('/docs/notes.txt')).toBe('text');
    expect(kindFromPath('/docs/backup.tar.gz')).toBeNull();
    expect(kindFromPath('/docs/1')).toBeNull();
  });

  it('reads reST titles at the level their adornment first appeared, literal blocks as code, roles as text', async () => {
    const source = [
      '=================',
      ' Tide Gauges',
      '=================',
      '',
      'Installing',
      '==========',
      '',
      'Mount the gauge below the lowest astronomical tide.',
      '',
      'Calibrating',
      '-----------',
      '',
      'Run the :command:`gauge-cal` tool as follows::',
      '',
      '    gauge-cal --datum chart',
      '    gauge-cal --check',
      '',
      'Then read the offset from :ref:`the log <log-format>`.',
      '',
      '.. code-block:: sh',
      '   :linenos:',
      '',
      '   gauge-cal --report',
      '',
      'Maintaining',
      '===========',
      '',
      'Clean the sensor every month.',
    ].join('\n');
    const document = await extractDocument(encode(source), 'rst', 'gauges.rst');
    expect(document.title).toBe('Tide Gauges');
    expect(headingsOf(document.text)).toEqual([
      'Tide Gauges › Installing',
      'Tide Gauges › Installing › Calibrating',
      'Tide Gauges › Maintaining',
    ]);
    expect(document.text).toContain(
      'Run the gauge-cal tool as follows:\n\n```\n    gauge-cal --datum chart\n    gauge-cal --check\n```',
    );
    expect(document.text).toContain('Then read the offset from the log.');
    expect(document.text).toContain('```\n   gauge-cal --report\n```');
    expect(passageWith(document.text, 'Clean the sensor')?.headings).toBe('Tide Gauges › Maintaining');
  });

  it('reads AsciiDoc sections, listing blocks as code, without comments and attributes', async () => {
    const source = [
      '= Harbour Handbook',
      ':toc: left',
      '// an editor’s note',
      '',
      '== Mooring',
      '',
      'Leave slack in the lines at high water.',
      '',
      '=== At low water',
      '',
      '----',
      'check-lines --all',
      '----',
      '',
      '////',
      'A block comment.',
      '////',
      '',
      '== Fees',
      '',
      'Visitors pay by the metre.',
    ].join('\n');
    const document = await extractDocument(encode(source), 'asciidoc', 'harbour.adoc');
    expect(document.title).toBe('Harbour Handbook');
    expect(headingsOf(document.text)).toEqual([
      'Harbour Handbook › Mooring',
      'Harbour Handbook › Mooring › At low water',
      'Harbour Handbook › Fees',
    ]);
    expect(document.text).toContain('```\ncheck-lines --all\n```');
    expect(document.text).not.toMatch(/toc: left|editor’s note|block comment/);
  });

  it('reads a gzipped man page: sections, options as terms, examples as code, escapes as characters', async () => {
    const page = [
      '.\\" a comment the reader never sees',
      '.TH TIDECALC 1 "November 2026" "tidecalc 2.1" "User Commands"',
      '.SH NAME',
      'tidecalc \\- predict the tide at a port',
      '.SH SYNOPSIS',
      '.B tidecalc',
      '[\\fIOPTION\\fR]... \\fIPORT\\fR',
      '.SH OPTIONS',
      '.TP',
      '.BR \\-d ", " \\-\\-days =\\fIN\\fR',
      'predict \\fIN\\fR days ahead (default 1)\\(em at most 366.',
      '.TP',
      '\\fB\\-u\\fR, \\fB\\-\\-utc\\fR',
      'print times in UTC, not local time',
      '.SS Exit status',
      '0 when the port is known, 2 otherwise.',
      '.SH EXAMPLES',
      '.nf',
      'tidecalc \\-d 7 Brest',
      'tidecalc \\-\\-utc Granville',
      '.fi',
    ].join('\n');
    const document = await extractDocument(gzipSync(encode(page)), 'man', 'tidecalc.1.gz');
    expect(document.title).toBe('TIDECALC(1)');
    expect(document.kind).toBe('man');
    expect(headingsOf(document.text)).toEqual([
      'TIDECALC(1) › NAME',
      'TIDECALC(1) › SYNOPSIS',
      'TIDECALC(1) › OPTIONS',
      'TIDECALC(1) › OPTIONS › Exit status',
      'TIDECALC(1) › EXAMPLES',
    ]);
    expect(document.text).toContain('tidecalc - predict the tide at a port');
    expect(document.text).toContain('-d, --days=N\n\npredict N days ahead (default 1)— at most 366.');
    expect(document.text).toContain('-u, --utc\n\nprint times in UTC, not local time');
    expect(document.text).toContain('```\ntidecalc -d 7 Brest\ntidecalc --utc Granville\n```');
    expect(document.text).not.toContain('comment the reader');
  });

  it('refuses what is not a man page, and a gzip that inflates past the cap', async () => {
    await expect(extractDocument(encode('2026-11-27 rotated log line\n'), 'man', 'syslog.1')).rejects.toThrow(
      /not a man page/,
    );
    const bomb = gzipSync(new Uint8Array(30 * 1024 * 1024));
    await expect(extractDocument(bomb, 'man', 'huge.1.gz')).rejects.toThrow(/not a readable gzip file/);
  });
});
