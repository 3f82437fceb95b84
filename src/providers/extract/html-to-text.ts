import type { AnyNode, Element } from 'domhandler';
import { LINK_END, LINK_START } from './extracted-document.ts';

/**
 * HTML (a parsed htmlparser2 tree) as the light Markdown the corpus searches and quotes: text as a
 * reader sees it. Headings become `#` lines, definition terms `#####` lines (a glossary entry or an
 * API signature heads what defines it), list items `-` or `1.` lines, table rows one `| … |` line
 * each (a row is never read as a sentence), preformatted blocks fenced code, inline code backticks.
 * A note, warning, tip or sidebar box (Sphinx's `admonition`, DocBook's `note`/`warning`/`sidebar`…)
 * becomes a blockquote, its title a bold line: it stays one block, told apart from the prose around
 * it, so research quotes it whole with the passage it qualifies.
 * Links keep their words between markers (for link density) and lose their URLs; emphasis is plain
 * text; permalink anchors, scripts, forms and images vanish; nothing is backslash-escaped.
 *
 * Written here rather than taken from turndown: on a large manual turndown was half of indexing
 * time (10 s of 20 s for Python's library reference), this walk is a small fraction of it.
 */

/** Elements whose content is never text a reader reads. */
const SKIPPED = new Set([
  'head',
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'form',
  'button',
  'select',
  'textarea',
  'nav',
  'footer',
  'svg',
  'math',
  'img',
  'picture',
  'video',
  'audio',
  'canvas',
]);

/** Elements that stand as blocks of their own (everything else flows inline). */
const BLOCKS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'caption',
  'center',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'fieldset',
  'figcaption',
  'figure',
  'header',
  'hgroup',
  'html',
  'legend',
  'main',
  'p',
  'section',
  'summary',
]);

const CODE = new Set(['code', 'kbd', 'samp', 'tt', 'var']);

/** Classes documentation builders give the boxes that qualify the text around them. */
const NOTE_BOXES = new Set([
  'admonition',
  'note',
  'warning',
  'tip',
  'caution',
  'important',
  'attention',
  'danger',
  'hint',
  'sidebar',
  'callout',
  'alert',
]);

function isNoteBox(element: Element): boolean {
  if (element.name !== 'div' && element.name !== 'aside') return false;
  const classes = (element.attribs.class ?? '').split(/\s+/);
  // "See also" boxes are lists of links, not a qualification of the text before them.
  if (classes.includes('seealso')) return false;
  return classes.some((name) => NOTE_BOXES.has(name));
}

/** A note box's Markdown as a blockquote: its heading lines bold, every line behind `> `. */
function noteBox(content: string): string {
  const lines = content
    .split('\n')
    .map((line) => line.replace(/[ \t]+$/, ''))
    // At most one blank line in a row, none at either end.
    .filter((line, index, all) => line.trim() || (index > 0 && all[index - 1]!.trim()))
    .join('\n')
    .trim()
    .split('\n');
  if (!lines.some((line) => line.trim())) return '';
  const quoted = lines.map((line) => {
    const heading = /^#{1,6}\s+(.+)$/.exec(line);
    const text = heading ? `**${heading[1]!.trim()}**` : line;
    return text.trim() ? `> ${text}` : '>';
  });
  return `\n\n${quoted.join('\n')}\n\n`;
}

function isElement(node: AnyNode): node is Element {
  return node.type === 'tag' || node.type === 'script' || node.type === 'style';
}

/** The raw text below a node (what `textContent` gives). */
export function textOf(node: AnyNode): string {
  if (node.type === 'text') return node.data;
  if (!isElement(node) && node.type !== 'root') return '';
  let text = '';
  for (const child of (node as Element).children) text += textOf(child);
  return text;
}

/** A heading's link to itself: Sphinx's `headerlink`, or a link to an anchor of the page that is only a mark (¶, #, §). */
function isPermalink(element: Element): boolean {
  if (/\bheaderlink\b/.test(element.attribs.class ?? '')) return true;
  const mark = textOf(element).trim();
  return mark === '¶' || ((mark === '#' || mark === '§') && (element.attribs.href ?? '').startsWith('#'));
}

/** A block's content as one line (headings, table cells, definition terms). */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function block(text: string): string {
  const trimmed = text.trim();
  return trimmed ? `\n\n${trimmed}\n\n` : '';
}

/** A list item's content under its marker: later lines indented to line up after the marker. */
function listItem(marker: string, content: string): string {
  const lines = content
    .trim()
    .replace(/\n{3,}/g, '\n\n')
    .split('\n');
  const indent = ' '.repeat(marker.length + 1);
  return `${marker} ${lines.map((line, index) => (index === 0 || !line.trim() ? line : indent + line)).join('\n')}\n`;
}

function renderChildren(element: Element | { children: AnyNode[] }, inPre: boolean): string {
  let text = '';
  for (const child of element.children) text += render(child, inPre);
  return text;
}

function renderList(element: Element): string {
  const ordered = element.name === 'ol';
  let number = Number(element.attribs.start ?? 1) || 1;
  let items = '';
  for (const child of element.children) {
    if (!isElement(child)) continue;
    if (child.name !== 'li') {
      items += renderChildren({ children: [child] }, false);
      continue;
    }
    items += listItem(ordered ? `${number++}.` : '-', renderChildren(child, false));
  }
  return `\n\n${items}\n`;
}

function renderTable(element: Element): string {
  const rows: string[] = [];
  const visit = (node: Element) => {
    for (const child of node.children) {
      if (!isElement(child)) continue;
      if (child.name === 'tr') {
        const cells = child.children
          .filter((cell): cell is Element => isElement(cell) && (cell.name === 'td' || cell.name === 'th'))
          .map((cell) => oneLine(renderChildren(cell, false)));
        if (cells.some(Boolean)) rows.push(`| ${cells.join(' | ')} |`);
      } else if (child.name === 'caption') rows.unshift(oneLine(renderChildren(child, false)));
      else if (child.name !== 'table') visit(child);
    }
  };
  visit(element);
  return rows.length ? `\n\n${rows.join('\n')}\n\n` : '';
}

/** Elements that end a heading's own text: a heading that holds one was never closed (`<h4>…</h3>`). */
const OUTSIDE_HEADINGS = new Set([...BLOCKS, 'pre', 'ul', 'ol', 'dl', 'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
/** Longest heading kept, in characters: a heading is a line, not a page. */
const HEADING_CHARS = 200;

/**
 * A heading line. Browsers tolerate a heading closed by the wrong tag (`<h4>…</h3>`), which leaves
 * the rest of the page inside it; the heading is then what comes before its first block, and the
 * blocks are rendered as the page's text they are. A heading is cut at a word within 200 characters.
 */
function renderHeading(element: Element): string {
  const blockAt = element.children.findIndex((child) => isElement(child) && OUTSIDE_HEADINGS.has(child.name));
  const own = blockAt === -1 ? element.children : element.children.slice(0, blockAt);
  let heading = oneLine(renderChildren({ children: own }, false));
  if (heading.length > HEADING_CHARS) heading = `${heading.slice(0, HEADING_CHARS).replace(/\s+\S*$/, '')}…`;
  const rest = blockAt === -1 ? '' : renderChildren({ children: element.children.slice(blockAt) }, false);
  return `${heading ? `\n\n${'#'.repeat(Number(element.name[1]))} ${heading}\n\n` : ''}${rest}`;
}

function render(node: AnyNode, inPre: boolean): string {
  if (node.type === 'text') return inPre ? node.data : node.data.replace(/\s+/g, ' ');
  if (node.type === 'root') return renderChildren(node, inPre);
  if (!isElement(node)) return '';
  const name = node.name;
  if (SKIPPED.has(name) || node.attribs.hidden !== undefined) return '';
  if (/^h[1-6]$/.test(name)) return renderHeading(node);
  switch (name) {
    case 'br':
      return '\n';
    case 'hr':
      return '\n\n';
    case 'pre': {
      const code = textOf(node).replace(/^\n+|\s+$/g, '');
      return code ? `\n\n\`\`\`\n${code}\n\`\`\`\n\n` : '';
    }
    case 'ul':
    case 'ol':
      return renderList(node);
    case 'li':
      return listItem('-', renderChildren(node, false));
    case 'table':
      return renderTable(node);
    case 'dt': {
      const term = oneLine(renderChildren(node, false));
      return term ? `\n\n##### ${term}\n\n` : '';
    }
    case 'a': {
      if (isPermalink(node)) return '';
      const content = renderChildren(node, inPre);
      return content.trim() ? `${LINK_START}${content}${LINK_END}` : '';
    }
  }
  if (CODE.has(name) && !inPre) {
    const code = oneLine(textOf(node));
    return code ? `\`${code}\`` : '';
  }
  const content = renderChildren(node, inPre);
  if (!inPre && isNoteBox(node)) return noteBox(content);
  return BLOCKS.has(name) ? block(content) : content;
}

/**
 * The text of an element (or a whole document) as light Markdown with link markers. Lines are
 * trimmed at their ends, and there is at most one blank line in a row.
 */
export function htmlToText(root: AnyNode): string {
  return render(root, false)
    .split('\n')
    .map((line) => line.replace(/[ \t]+$/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
