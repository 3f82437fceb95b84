import MarkdownIt from 'markdown-it';

/**
 * Raw HTML in a report is shown as text, never run: sources can contain anything. Images are not
 * rendered at all (their alt text stays): a report shaped by a web page must never make the
 * reader's browser contact another host.
 */
const markdown = new MarkdownIt({ html: false, linkify: true }).disable('image');

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
}

/** Splits rendered HTML into code (kept as is) and the rest (where citations are linked). */
function outsideCode(html: string, transform: (text: string) => string): string {
  return html
    .split(/(<pre[\s>][\s\S]*?<\/pre>|<code[\s>][\s\S]*?<\/code>)/)
    .map((part, index) => (index % 2 === 1 ? part : transform(part)))
    .join('');
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
  return outsideCode(markdown.render(text), (part) =>
    part
      .replace(/\[(\d+(?:, ?\d+)*)\]/g, (_whole, list: string) =>
        list
          .split(/, ?/)
          .map((item) =>
            options.citations.has(Number(item))
              ? `<button type="button" class="citation" data-citation="${item}" aria-label="Source ${item}">[${item}]</button>`
              : `[${item}]`,
          )
          .join(''),
      )
      .replace(/<strong>\[unverified\]<\/strong>/g, () => marker('unverified'))
      .replace(/<strong>\[uncited\]<\/strong>/g, () => marker('uncited')),
  );
}

/** Markdown of a conversation message (an answer cites like a report). */
export function renderMessage(text: string, citations: ReadonlySet<number>): string {
  return renderReport(text, { citations });
}
