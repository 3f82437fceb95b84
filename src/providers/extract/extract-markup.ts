import { gunzipSync } from 'node:zlib';

/**
 * Plain-text markup read with its structure: reStructuredText and AsciiDoc sources, and man pages
 * (roff, gzipped or not), turned into the Markdown the corpus chunks by heading: section titles
 * become headings at their level, literal blocks become code blocks, and the text is kept as
 * written otherwise (no markup is rendered beyond what a reader needs to see the words).
 */

/** reST adornment characters (any non-alphanumeric printable ASCII may be used; these are the usual). */
const RST_ADORNMENT = /^([=\-`:'"~^_*+#<>.])\1{2,}\s*$/;

/**
 * reStructuredText: a title is a line underlined (and perhaps overlined) by one punctuation character
 * repeated at least as long; its level is the order in which that style first appears. A paragraph
 * ending in `::` introduces the indented literal block after it.
 */
export function rstToMarkdown(text: string): { markdown: string; title: string | undefined } {
  const lines = text.split('\n');
  const styles: string[] = [];
  const out: string[] = [];
  let title: string | undefined;
  let literal = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const next = lines[index + 1] ?? '';
    if (literal) {
      if (line.trim() === '' || /^\s/.test(line)) {
        // Blank lines before the block's first line are no part of it.
        if (line.trim() || out.at(-1) !== '```') out.push(line);
        continue;
      }
      // The block ends at the first line back at the margin: close the fence before its blank lines.
      const trailing: string[] = [];
      while (out.length && out.at(-1)!.trim() === '') trailing.push(out.pop()!);
      out.push('```', ...trailing);
      literal = false;
    }
    // An overlined title: adornment, text, the same adornment.
    const over = RST_ADORNMENT.exec(line);
    const after = lines[index + 2] ?? '';
    if (over && next.trim() && RST_ADORNMENT.test(after) && after.trim() === line.trim()) {
      const style = `${over[1]}/over`;
      if (!styles.includes(style)) styles.push(style);
      const heading = next.trim();
      title ??= heading;
      out.push(`${'#'.repeat(Math.min(6, styles.indexOf(style) + 1))} ${heading}`);
      index += 2;
      continue;
    }
    const under = RST_ADORNMENT.exec(next);
    if (line.trim() && !/^\s/.test(line) && under && next.trim().length >= line.trim().length) {
      const style = under[1]!;
      if (!styles.includes(style)) styles.push(style);
      title ??= line.trim();
      out.push(`${'#'.repeat(Math.min(6, styles.indexOf(style) + 1))} ${line.trim()}`);
      index += 1;
      continue;
    }
    // A code directive's indented body (its options, `:linenos:`, left out) is a code block too.
    if (/^\.\.\s+(code-block|code|sourcecode|literalinclude)::/.test(line.trim())) {
      while (/^\s+:[\w-]+:/.test(lines[index + 1] ?? '')) index++;
      out.push('```');
      literal = true;
      continue;
    }
    if (/::\s*$/.test(line) && !/^\.\./.test(line)) {
      // `Paragraph::` reads "Paragraph:"; a lone `::` says nothing.
      const kept = line.replace(/\s*::\s*$/, line.trim() === '::' ? '' : ':');
      if (kept.trim()) out.push(kept);
      out.push('', '```');
      literal = true;
      continue;
    }
    out.push(line);
  }
  if (literal) out.push('```');
  // Roles (`:mod:\`email\``, `:ref:\`text <target>\``) read as their text.
  const markdown = out.join('\n').replace(/:[\w.-]+(?::[\w.-]+)?:`([^`<]+?)(?:\s*<[^>`]*>)?`/g, '$1');
  return { markdown, title: title?.replace(/:[\w.-]+(?::[\w.-]+)?:`([^`<]+?)(?:\s*<[^>`]*>)?`/g, '$1') };
}

/**
 * AsciiDoc: `= Title`, `== Section`… (or Markdown's `#`), listing (`----`) and literal (`....`)
 * blocks as code, and attribute entries (`:name: value`) and comments left out.
 */
export function asciidocToMarkdown(text: string): { markdown: string; title: string | undefined } {
  const out: string[] = [];
  let title: string | undefined;
  let fence: string | null = null;
  let comment = false;
  for (const line of text.split('\n')) {
    if (comment) {
      if (/^\/{4,}\s*$/.test(line)) comment = false;
      continue;
    }
    if (fence) {
      if (line.trim() === fence) {
        out.push('```');
        fence = null;
      } else out.push(line);
      continue;
    }
    if (/^\/{4,}\s*$/.test(line)) {
      comment = true;
      continue;
    }
    if (/^(-{4,}|\.{4,})\s*$/.test(line)) {
      fence = line.trim();
      out.push('```');
      continue;
    }
    if (/^\/\/(?!\/)/.test(line) || /^:[\w-]+!?:/.test(line)) continue;
    const heading = /^(={1,6}|#{1,6})\s+(\S.*?)\s*$/.exec(line);
    if (heading) {
      title ??= heading[2];
      out.push(`${'#'.repeat(heading[1]!.length)} ${heading[2]}`);
      continue;
    }
    out.push(line);
  }
  if (fence) out.push('```');
  return { markdown: out.join('\n'), title };
}

/** The bytes of a man page file: gunzipped when it is gzipped (`ls.1.gz`), within a size cap. */
export function manPageText(bytes: Uint8Array, name: string): string {
  const zipped = name.toLowerCase().endsWith('.gz') || (bytes[0] === 0x1f && bytes[1] === 0x8b);
  let raw: Uint8Array = bytes;
  if (zipped) {
    try {
      raw = gunzipSync(bytes, { maxOutputLength: 20 * 1024 * 1024 });
    } catch (error) {
      throw new Error(`not a readable gzip file (${(error as Error).message})`);
    }
  }
  return new TextDecoder('utf-8').decode(raw);
}

/** roff's escapes as the characters they print; font changes and other controls as nothing. */
function roffText(text: string): string {
  const named: Record<string, string> = {
    em: '—',
    en: '–',
    hy: '-',
    aq: "'",
    dq: '"',
    lq: '“',
    rq: '”',
    oq: '‘',
    cq: '’',
    bu: '•',
    co: '©',
    rg: '®',
    tm: '™',
    '<=': '≤',
    '>=': '≥',
    mu: '×',
    ga: '`',
    ti: '~',
    ha: '^',
    rs: '\\',
  };
  return text
    .replace(/\\\((..)/g, (whole, name: string) => named[name] ?? whole)
    .replace(/\\\[([^\]]+)\]/g, (whole, name: string) => named[name] ?? whole)
    .replace(/\\f(\[[^\]]*\]|\(..|.)/g, '')
    .replace(/\\s[-+]?\d/g, '')
    .replace(/\\m\[[^\]]*\]|\\m\(..|\\m./g, '')
    .replace(/\\[ud]/g, '')
    .replace(/\\[&|^)%:,/]/g, '')
    .replace(/\\[-e]/g, (found) => (found === '\\-' ? '-' : '\\'))
    .replace(/\\ /g, ' ')
    .replace(/\\".*$/, '')
    .replace(/\\c$/, '');
}

/** A macro line's arguments, quotes honored (`.B "two words" next`). */
function macroArguments(rest: string): string[] {
  return [...rest.matchAll(/"((?:[^"]|"")*)"|(\S+)/g)].map((match) => (match[1] ?? match[2]!).replace(/""/g, '"'));
}

/**
 * A man page (man or mdoc macros): `.SH`/`.Sh` sections and `.SS`/`.Ss` subsections as headings
 * under the page's name, paragraphs, tagged paragraphs (`.TP`: an option and what it does),
 * no-fill blocks (`.nf`/`.fi`, `.EX`/`.EE`) as code. What is not roff is refused.
 */
export function manToMarkdown(source: string): { markdown: string; title: string } {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const firstMacro = lines.find((line) => line.trim() && !/^\.\\"|^'\\"/.test(line));
  if (!firstMacro || !/^[.']/.test(firstMacro)) throw new Error('not a man page (no roff macros)');
  const out: string[] = [];
  let title = '';
  let fill = true;
  let paragraph: string[] = [];
  let tagNext = false;
  const flush = () => {
    if (paragraph.length) out.push(...(fill ? [paragraph.join(' '), ''] : paragraph));
    paragraph = [];
  };
  for (const line of lines) {
    if (/^[.']\s*\\"/.test(line) || /^\.\s*$/.test(line)) continue;
    const macro = /^[.']\s*([A-Za-z]{1,3})\b\s*(.*)$/.exec(line);
    if (!macro) {
      const text = roffText(line);
      if (!fill) paragraph.push(text);
      else if (text.trim()) paragraph.push(text.trim());
      else flush();
      if (tagNext && fill) {
        // A tagged paragraph's tag is a line of its own, as a term in a definition list.
        flush();
        tagNext = false;
      }
      continue;
    }
    const [, name, rest] = macro as unknown as [string, string, string];
    const args = macroArguments(roffText(rest));
    switch (name) {
      case 'TH':
      case 'Dt':
        title = args.slice(0, 2).join('(') + (args.length > 1 ? ')' : '');
        break;
      case 'SH':
      case 'Sh':
        flush();
        out.push(`## ${args.join(' ')}`, '');
        break;
      case 'SS':
      case 'Ss':
        flush();
        out.push(`### ${args.join(' ')}`, '');
        break;
      case 'PP':
      case 'RS':
      case 'RE':
      case 'LP':
      case 'P':
      case 'Pp':
      case 'br':
      case 'sp':
        flush();
        break;
      case 'TP':
        flush();
        tagNext = true;
        break;
      case 'IP':
        flush();
        if (args[0]) paragraph.push(args[0]);
        break;
      case 'nf':
      case 'EX':
      case 'Bd':
        flush();
        out.push('```');
        fill = false;
        break;
      case 'fi':
      case 'EE':
      case 'Ed':
        flush();
        out.push('```', '');
        fill = true;
        break;
      // Font macros set their arguments in one font (B, I) or alternate two, without spaces (BR, IR…).
      case 'B':
      case 'I':
      case 'SM':
      case 'SB':
      case 'BR':
      case 'RB':
      case 'IR':
      case 'RI':
      case 'BI':
      case 'IB':
        paragraph.push(args.join(name.length === 2 && name !== 'SM' && name !== 'SB' ? '' : ' '));
        if (tagNext && fill) {
          flush();
          tagNext = false;
        }
        break;
      case 'Nm':
      case 'Nd':
      case 'Fl':
      case 'Ar':
      case 'Op':
        paragraph.push(name === 'Fl' ? args.map((arg) => `-${arg}`).join(' ') : args.join(' '));
        break;
      default:
        // Hyphenation, page controls and the rest: no words of their own.
        break;
    }
  }
  flush();
  if (!fill) out.push('```');
  const name = title || 'manual page';
  return { markdown: [`# ${name}`, '', ...out].join('\n').replace(/\n{3,}/g, '\n\n'), title: name };
}
