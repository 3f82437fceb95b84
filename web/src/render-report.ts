import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';

/**
 * Raw HTML in a report is shown as text, never run: sources can contain anything. Images are not
 * rendered at all (their alt text stays): a report shaped by a web page must never make the
 * reader's browser contact another host.
 */
const markdown = new MarkdownIt({ html: false, linkify: true }).disable('image');

/** What a render is told and counts as it goes (see `RenderOptions`). */
interface RenderEnv {
  /** Citation numbers that name a source; absent for a passage, whose `[n]` is its source's own. */
  citations?: ReadonlySet<number>;
  flagged?: readonly FlaggedClaim[];
  /** Level-2 and level-3 headings get ids and copy buttons. */
  sections?: boolean;
  /** Headings and flags met so far. */
  headings?: number;
  flags?: number;
}

const copyCode = '<button type="button" class="copy" data-copy-code aria-label="Copy this code">Copy</button>';
// A code block scrolls sideways: it takes keyboard focus, so the keyboard can scroll it too (WCAG 2.1.1).
// In a report or a message it comes with a button that copies its text.
for (const rule of ['fence', 'code_block'] as const) {
  const render = markdown.renderer.rules[rule]!;
  markdown.renderer.rules[rule] = (tokens, index, options, env: RenderEnv, self) => {
    const block = render(tokens, index, options, env, self).replace(/^<pre>/, '<pre tabindex="0">');
    return env.citations ? `<div class="code-block">${copyCode}${block.trimEnd()}</div>\n` : block;
  };
}

/** Level-2 and level-3 headings of a report get the ids `reportSections` names, and each a copy button. */
const sectionHeading = (tag: string, env: RenderEnv) => env.sections && (tag === 'h2' || tag === 'h3');
markdown.renderer.rules.heading_open = (tokens, index, options, env: RenderEnv, self) => {
  const token = tokens[index]!;
  if (sectionHeading(token.tag, env)) {
    env.headings = (env.headings ?? 0) + 1;
    token.attrSet('id', `section-${env.headings}`);
  }
  return self.renderToken(tokens, index, options);
};
markdown.renderer.rules.heading_close = (tokens, index, options, env: RenderEnv, self) => {
  const closing = self.renderToken(tokens, index, options);
  if (!sectionHeading(tokens[index]!.tag, env)) return closing;
  return ` <button type="button" class="copy" data-copy-section="${env.headings}" aria-label="Copy this section as Markdown">Copy</button>${closing}`;
};
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

/**
 * A known source's `[n]` becomes a button that opens its passage, in the report's own words only:
 * never in code (a code span is a token of its own), never in an attribute, never in a blockquote (a
 * quoted passage is its source's text: its `[2]` is the source's). A flagged claim's
 * `**[unverified]**` or `**[uncited]**` becomes a marker that says why.
 */
markdown.core.ruler.push('citations', (state) => {
  const env = state.env as RenderEnv;
  const citations = env.citations;
  if (!citations) return;
  let quotes = 0;
  const html = (content: string) => Object.assign(new state.Token('html_inline', '', 0), { content });
  for (const token of state.tokens) {
    if (token.type === 'blockquote_open') quotes += 1;
    else if (token.type === 'blockquote_close') quotes -= 1;
    if (token.type !== 'inline' || !token.children) continue;
    const children = token.children;
    // `**[unverified]**` parses as strong_open, text, strong_close: the three become one marker.
    const flagAt = (at: number) =>
      children[at - 1]?.type === 'strong_open' &&
      children[at + 1]?.type === 'strong_close' &&
      /^\[(?:unverified|uncited)\]$/.test(children[at]?.type === 'text' ? children[at].content : '');
    token.children = children.flatMap((child, index): Token[] => {
      if (flagAt(index)) return [html(flagMarker(child.content.slice(1, -1) as 'unverified' | 'uncited', env))];
      if (flagAt(index + 1) || flagAt(index - 1)) return [];
      if (child.type !== 'text' || quotes > 0) return [child];
      return child.content.split(/(\[\d+(?:, ?\d+)*\])/).flatMap((part, at) => {
        if (at % 2 === 0) return part ? [Object.assign(new state.Token('text', '', 0), { content: part })] : [];
        const numbers = part.slice(1, -1).split(/, ?/);
        return numbers.map((number) =>
          citations.has(Number(number))
            ? html(
                `<button type="button" class="citation" data-citation="${number}" aria-label="Source ${number}">[${number}]</button>`,
              )
            : Object.assign(new state.Token('text', '', 0), { content: `[${number}]` }),
        );
      });
    });
  }
});

/** The marker of the next flagged claim: its kind, and why (from the report version's claims, in order). */
function flagMarker(kind: 'unverified' | 'uncited', env: RenderEnv): string {
  const claim = env.flagged?.[env.flags ?? 0];
  env.flags = (env.flags ?? 0) + 1;
  const reason =
    claim?.reason ??
    (kind === 'uncited' ? 'This claim cites no source of the report.' : 'Its cited source does not support it.');
  return `<button type="button" class="flag ${kind}" data-reason="${escapeHtml(reason)}" aria-label="${kind}: ${escapeHtml(reason)}">${kind}</button>`;
}

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

/**
 * Report Markdown as safe HTML: `[n]` citations become buttons that open their passage (never
 * inside code spans or blocks), and flagged claims carry a marker that says why.
 */
export function renderReport(text: string, options: RenderOptions): string {
  const env: RenderEnv = {
    citations: options.citations,
    flagged: options.flagged,
    sections: options.sections !== false,
  };
  return markdown.render(text, env);
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
