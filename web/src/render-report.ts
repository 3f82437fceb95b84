import MarkdownIt from 'markdown-it';

/**
 * Raw HTML in a report is shown as text, never run: sources can contain anything. Images are not
 * rendered at all (their alt text stays): a report shaped by a web page must never make the
 * reader's browser contact another host.
 */
const markdown = new MarkdownIt({ html: false, linkify: true }).disable('image');
// A code block scrolls sideways: it takes keyboard focus, so the keyboard can scroll it too (WCAG 2.1.1).
for (const rule of ['fence', 'code_block'] as const) {
  const render = markdown.renderer.rules[rule]!;
  markdown.renderer.rules[rule] = (tokens, index, options, env, self) =>
    render(tokens, index, options, env, self).replace(/^<pre>/, '<pre tabindex="0">');
}

/** What a render is told: the citation numbers that name a source (see `RenderOptions`). */
interface RenderEnv {
  citations?: ReadonlySet<number>;
}

/**
 * A source list's local document (`1. Title — <path>`, or `- [1] Title — <path>` in an answer) opens
 * its source beside the report, as its citations do: a path on the server is no link a browser can
 * follow. Web addresses stay links (linkify). Works on the parsed Markdown, so code and quotes,
 * which are not list items' own text, are never touched.
 */
markdown.core.ruler.push('source-links', (state) => {
  const citations = (state.env as RenderEnv).citations;
  if (!citations) return;
  // The number the current item of each open list has (NaN in a bulleted list).
  const items: number[] = [];
  for (const token of state.tokens) {
    if (token.type === 'ordered_list_open') items.push(Number(token.attrGet('start') ?? 1) - 1);
    else if (token.type === 'bullet_list_open') items.push(Number.NaN);
    else if (token.type === 'ordered_list_close' || token.type === 'bullet_list_close') items.pop();
    else if (token.type === 'list_item_open' && items.length > 0) items[items.length - 1]! += 1;
    else if (token.type === 'inline' && items.length > 0 && token.children) {
      const last = token.children.at(-1);
      const local = last?.type === 'text' ? /^([\s\S]*— )<([^<>\s][^<>]*)>$/.exec(last.content) : null;
      // A web address is a link already; a path or a file: URL names a document on the server.
      if (!last || !local || (/^[a-z][a-z0-9+.-]*:/i.test(local[2]!) && !/^file:/i.test(local[2]!))) continue;
      const number = Number.isNaN(items.at(-1)) ? Number(/^\[(\d+)\]/.exec(token.content)?.[1]) : items.at(-1)!;
      if (!citations.has(number)) continue;
      last.content = local[1]!;
      const button = new state.Token('html_inline', '', 0);
      const path = escapeHtml(local[2]!);
      button.content = `<button type="button" class="source-link" data-citation="${number}" aria-label="Open source ${number}: ${path}">${path}</button>`;
      token.children.push(button);
    }
  }
});

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!,
  );
}

/** A claim the report marks, with why (from the report version's claims, in the order they appear). */
export interface FlaggedClaim {
  verdict: 'unsupported' | 'uncited' | string;
  reason: string;
}

export interface RenderOptions {
  /** Citation numbers that name a source of the report (others stay plain text). */
  citations: ReadonlySet<number>;
  /** The claims marked unverified or uncited, in report order. */
  flagged?: readonly FlaggedClaim[];
  /** False for a message: its headings get no ids or copy buttons (they are the report's). */
  sections?: boolean;
}

/**
 * Applies `transform` to the text of rendered HTML only: never inside a tag (an attribute such as a
 * link's title keeps its `[1]`), never in code, which is kept as is, and never in a blockquote (a
 * quoted passage is its source's text: its `[2]` is the source's, not a citation).
 */
function inText(html: string, transform: (text: string) => string): string {
  let quotes = 0;
  return html
    .split(/(<pre[\s>][\s\S]*?<\/pre>|<code[\s>][\s\S]*?<\/code>|<[^>]*>)/)
    .map((part, index) => {
      if (index % 2 === 1) {
        if (/^<blockquote[\s>]/.test(part)) quotes += 1;
        else if (part === '</blockquote>') quotes = Math.max(0, quotes - 1);
        return part;
      }
      return quotes > 0 ? part : transform(part);
    })
    .join('');
}

/** A section of a report: a level-2 or level-3 heading and the Markdown up to the next one. */
export interface ReportSection {
  level: 2 | 3;
  title: string;
  /** The heading's element id in the rendered report. */
  id: string;
  /** The section's Markdown, its heading included. */
  markdown: string;
}

/** The report's sections in order (its table of contents), each with its own Markdown. */
export function reportSections(text: string): ReportSection[] {
  const lines = text.split('\n');
  const tokens = markdown.parse(text, {});
  const headings = tokens.flatMap((token, index) =>
    token.type === 'heading_open' && (token.tag === 'h2' || token.tag === 'h3') && token.map
      ? [{ level: token.tag === 'h2' ? 2 : 3, line: token.map[0], title: tokens[index + 1]?.content ?? '' } as const]
      : [],
  );
  return headings.map((heading, index) => {
    // A section ends where the next heading of its level or above begins.
    const end = headings.slice(index + 1).find((next) => next.level <= heading.level)?.line ?? lines.length;
    return {
      level: heading.level,
      title: heading.title,
      id: `section-${index + 1}`,
      markdown: lines.slice(heading.line, end).join('\n').trimEnd(),
    };
  });
}

/** Gives level-2 and level-3 headings the ids `reportSections` names, and each a copy button. */
function withSectionIds(html: string): string {
  let index = 0;
  return html.replace(/<h([23])>([\s\S]*?)<\/h\1>/g, (_whole, level: string, inner: string) => {
    index += 1;
    return `<h${level} id="section-${index}">${inner} <button type="button" class="copy" data-copy-section="${index}" aria-label="Copy this section as Markdown">Copy</button></h${level}>`;
  });
}

/** Each code block gets a button that copies its text. */
function withCodeCopy(html: string): string {
  return html
    .replace(
      /<pre tabindex="0">/g,
      '<div class="code-block"><button type="button" class="copy" data-copy-code aria-label="Copy this code">Copy</button><pre tabindex="0">',
    )
    .replace(/<\/pre>/g, '</pre></div>');
}

/**
 * Report Markdown as safe HTML: `[n]` citations become buttons that open their passage (never
 * inside code spans or blocks), and flagged claims carry a marker that says why.
 */
export function renderReport(text: string, options: RenderOptions): string {
  let flagIndex = 0;
  const marker = (kind: 'unverified' | 'uncited') => {
    const claim = options.flagged?.[flagIndex++];
    const label = kind === 'uncited' ? 'uncited' : 'unverified';
    const reason =
      claim?.reason ??
      (kind === 'uncited' ? 'This claim cites no source of the report.' : 'Its cited source does not support it.');
    return `<button type="button" class="flag ${kind}" data-reason="${escapeHtml(reason)}" aria-label="${label}: ${escapeHtml(reason)}">${label}</button>`;
  };
  const env: RenderEnv = { citations: options.citations };
  const html = inText(markdown.render(text, env), (part) =>
    part.replace(/\[(\d+(?:, ?\d+)*)\]/g, (_whole, list: string) =>
      list
        .split(/, ?/)
        .map((item) =>
          options.citations.has(Number(item))
            ? `<button type="button" class="citation" data-citation="${item}" aria-label="Source ${item}">[${item}]</button>`
            : `[${item}]`,
        )
        .join(''),
    ),
  )
    .replace(/<strong>\[unverified\]<\/strong>/g, () => marker('unverified'))
    .replace(/<strong>\[uncited\]<\/strong>/g, () => marker('uncited'));
  return options.sections === false ? withCodeCopy(html) : withCodeCopy(withSectionIds(html));
}

/** Markdown of a conversation message (an answer cites like a report). */
export function renderMessage(text: string, citations: ReadonlySet<number>): string {
  return renderReport(text, { citations, sections: false });
}

/** Where a passage's quoted words begin and end, through Markdown rendering (private-use characters). */
const QUOTE_START = '\uE000';
const QUOTE_END = '\uE001';

/**
 * A cited passage as its source wrote it, Markdown rendered as safely as a report (no HTML, no
 * images), with the quoted words in `<mark>`: marked run by run, so a quote across a paragraph or a
 * list item never nests tags wrongly.
 */
export function renderPassage(passage: { before: string; quote: string; after: string }): string {
  const clean = (text: string) => text.replace(/[\uE000\uE001]/g, '');
  const html = markdown.render(
    `${clean(passage.before)}${QUOTE_START}${clean(passage.quote)}${QUOTE_END}${clean(passage.after)}`,
  );
  let inside = false;
  return html
    .split(/(<[^>]*>)/)
    .map((part, index) => {
      if (index % 2 === 1) return clean(part);
      return part
        .split(/([\uE000\uE001])/)
        .map((piece) => {
          if (piece === QUOTE_START || piece === QUOTE_END) {
            inside = piece === QUOTE_START;
            return '';
          }
          return inside && piece.trim() ? `<mark>${piece}</mark>` : piece;
        })
        .join('');
    })
    .join('');
}
